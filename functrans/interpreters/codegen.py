"""Code generation: a jaxpr compiled to a Python function of straight-line array calls.

``compile_jaxpr(closed, library)`` turns a jaxpr into the source of one Python function,
``exec``s it once, and returns it: a call then costs the array calls alone, without an
interpreter, a trace stack or a rule lookup per operation.  The generated function takes
the jaxpr's arguments positionally and returns its outputs as a tuple.

Type::

    compile_jaxpr : (closed jaxpr, array library) -> Python function (arrays -> arrays)

Each primitive is written out by its *lowering rule*, ``rule(ctx, *operands, **params) ->
expression`` (operands are source expressions; ``ctx.xp`` names the array module, and
``ctx.bind(obj)`` names any other Python object the code needs), kept with everything else
the passes below know of the primitive in one record, ``Primitive.lowering`` (a
``Lowering``), filled by the primitive's family with ``deflowering``.  A primitive without
a rule calls its impl rule, so everything compiles; lowering rules only make the common
primitives cheaper.

Before writing code, the equations pass through (each measured in benchmarks/):

* inlining of call primitives (``Lowering.inline``: ``jit`` inside ``jit``, ``checkpoint``, the
  primal functions of custom rules), so the passes below see across call boundaries;
* forwarding: an equation whose ``Lowering.simplify`` shows it returns one of its
  operands (``x * 1``, ``x + 0``, a transpose of a transpose, a reshape to the same shape)
  is dropped; a ``broadcast_in_dim`` read only by NumPy-broadcasting primitives that would
  broadcast its operand the same way is dropped too (``Lowering.numpy_broadcast``);
* constant folding of equations whose operands are all literals (scalars; small results);
* common-subexpression elimination (same primitive, operands and parameters);
* dead-code elimination;
* freeing: each variable is deleted after its last use, so the memory of an intermediate
  is returned as soon as possible (peak memory as a hand-written function's);
* writing a result into a dead operand's buffer (``Lowering.augmented``, ``Lowering.ufunc``);
* on NumPy, Python scalars mixed with arrays written as 0-d arrays of the type NumPy
  converts them to (same results, no conversion per call);
* on NumPy with numba installed, fusion: regions of elementwise equations (``Lowering.
  kernel``), ended by reductions over their trailing axes (``Lowering.reduction``), become
  one loop compiled by numba where a cost model says it pays, and scatter-adds
  (``Lowering.scatter``) one loop each (see "Fusion" below); on CuPy the same regions
  become CuPy kernels ("GPU kernels").

Invariants the code keeps: it never writes into an argument or a constant (no operation
works in place on a buffer it did not allocate), and an output that could share memory
with an argument or a constant (a reshape of an input, say) is copied, so that the caller
changing an argument later never changes a result.
"""
from __future__ import annotations

import collections
import functools
import itertools
import math
import os
import re
import threading
import time
import weakref
from typing import Callable

import numpy as np

from functrans import backend, config
from functrans.interpreters import llvm_kernels
from functrans.core import (ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Primitive, ShapedArray,
                            Var, abstract_eval_out_avals, eqn_has_effects, impl_rules,
                            weak_operand_dtypes)

__all__ = ["Lowering", "deflowering", "Ref", "compile_jaxpr", "CompiledFunction",
           "optimize_jaxpr", "literal_key", "params_key", "scalar_kernel", "fusion_active",
           "CudaKernel", "cuda_expression", "DaskRegion", "RowRegion", "rows_elementwise",
           "rows_reduction", "rowed", "along", "ROW_NUMBERS", "NEVER", "row_columns",
           "numbers_kept"]


class Lowering:
    """How the code generator writes one primitive: the record ``Primitive.lowering``,
    made and filled by ``deflowering``.  Every field is optional; a primitive without a
    ``rule`` is written as a call of its impl rule.

    ``rule(ctx, *operand_expressions, **params) -> expression``: the source of the result
    (a tuple of results for primitives with multiple results); ``ctx.xp`` names the array
    module, ``ctx.bind(obj)`` any other Python object the code needs.
    ``fresh``: the expression always allocates its result (a ufunc, a matrix product), as
    opposed to possibly returning a view of an operand (a reshape, a transpose).
    ``inline(**params) -> closed jaxpr``: a call primitive, whose jaxpr is inlined.
    ``simplify(operands, out_aval, **params) -> index or None``: an operand that *is* the
    result (same shape and dtype): the equation is dropped and that operand used.
    ``numpy_broadcast(operand_aval, out_aval, **params) -> bool``: NumPy broadcasting of the
    operand against the output shape gives the primitive's values (a ``broadcast_in_dim``
    adding leading axes or stretching size-1 ones).
    ``broadcasting``: the operands broadcast together as NumPy's do (elementwise binary
    operations, ``select``).
    ``commutative``: a binary primitive whose operands may be swapped.
    ``rewrite(operands, producer, **params) -> steps or None``: the equation rewritten as
    ``[(primitive, operands, params), ...]`` (``Ref(i)`` reads step ``i``'s result, the last
    step gives the result), for rewrites that save work *exactly* (``a + (-b)`` as
    ``a - b``); ``producer(id(var))`` is the equation computing a variable.
    ``splat(shape) -> params``: the primitive spreads a scalar to ``shape`` with these
    parameters; an operation of broadcasting primitives on spread scalars is folded into
    the spread of its value.
    ``ufunc``: the NumPy/CuPy ufunc it is (``"add"``): a large result may be written into a
    dead operand's buffer (``out=``).
    ``augmented``: the augmented assignment computing a binary primitive in place (``"*="``).
    ``kernel(operands, in_dtypes, out_dtype, **params) -> expression or None``: the primitive
    on scalars, as source for a fused loop compiled by numba (operands are scalar
    expressions of dtypes ``in_dtypes``; the result is converted to ``out_dtype``), or None
    where the scalar code would not give NumPy's values for these dtypes: an elementwise
    primitive that may join a fused region (see "Fusion" below).
    ``reduction``: ``"sum"``, ``"max"`` or ``"min"`` for a reduction (parameter ``axes``)
    that may end a fused region when it reduces the region's trailing axes.
    ``scatter``: ``"add"`` for a scatter-add (operands ``operand, indices, updates``, shapes
    as for ``lax.scatter_add``; parameter ``mode``: "clip" or "drop"), which fusion writes
    as one loop.
    ``rows(n, in_avals, out_aval, **params) -> (kind, sized) or None`` (``out_aval``: the
    list of result types for a primitive of several results): how the primitive
    acts on arrays split into chunks of rows, an array being *rowed* when its leading axis
    has the program's row count ``n`` (see "Row regions"): ``kind`` ``"rows"`` when each
    chunk of rows of the result is the primitive of the same chunk of the rowed operands
    (and of the others whole), the names ``sized`` of the parameters whose first entry is
    the row count, set to a chunk's; ``"sum"``, ``"max"`` or ``"min"`` when the result
    (not rowed) is that combination of the primitive's results for each chunk; ``"same"``
    when it is not rowed and every chunk gives all of it (``iota`` placed beside a chunk);
    None otherwise.  Primitives with a ``kernel``, ``broadcasting`` or a ``ufunc`` are
    elementwise (``rows_elementwise``) unless they say otherwise.  Kind ``"row_index"``
    (``iota``): a rowed result whose row ``r`` holds the number ``r``, which a chunk
    computes from its first row's number.
    ``numbers(n, in_avals, out_aval, facts, **params) -> fact or None``: what the result
    is known to hold in terms of the rows' numbers (``ROW_NUMBERS``, ``NEVER``, or a
    frozenset of columns: see "Row regions") given the operands' ``facts`` (each such a
    fact, the value of a scalar constant, or None).
    ``positions``: the index of the operand whose last axis holds positions in the
    leading axes of operand 0 (gather's and the scatters' form): where the positions in
    axis 0 are provably each row's own number, or the rows are an axis that operand 0 and
    the positions share (param ``batch_dims``), the equation acts on each chunk of rows
    alone.
    """

    __slots__ = ("rule", "fresh", "inline", "simplify", "numpy_broadcast", "broadcasting",
                 "commutative", "rewrite", "splat", "ufunc", "augmented", "kernel",
                 "reduction", "scatter", "rows", "numbers", "positions")

    def __init__(self):
        self.rule = self.inline = self.simplify = self.numpy_broadcast = None
        self.rewrite = self.splat = self.ufunc = self.augmented = self.kernel = None
        self.reduction = self.scatter = self.rows = self.numbers = self.positions = None
        self.fresh = self.broadcasting = self.commutative = False

    def __repr__(self):
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__
                           if getattr(self, k) not in (None, False))
        return f"Lowering({fields})"


_NO_LOWERING = Lowering()  # what a primitive without a record reads
#: the primitive that spreads scalars (a ``splat`` field), once one is registered
_splat: list = []


def deflowering(prim: Primitive, rule: Callable | None = None, **fields) -> Lowering:
    """Fill in ``prim``'s ``Lowering`` (made on first use) with ``rule`` (if given) and
    ``fields`` (``fresh=``, ``ufunc=``, ``simplify=``, ...: see ``Lowering``), and return
    it.  A rule given without ``fresh`` is taken to allocate its result."""
    record = prim.lowering
    if record is None:
        record = prim.lowering = Lowering()
    if rule is not None:
        record.rule = rule
        fields.setdefault("fresh", True)
    for name, value in fields.items():
        setattr(record, name, value)  # an unknown name raises: Lowering has __slots__
    if fields.get("splat") is not None and prim not in _splat:
        _splat.append(prim)
    return record


def _lowering(prim: Primitive) -> Lowering:
    record = prim.lowering
    return _NO_LOWERING if record is None else record


#: results of at least this many elements reuse a dead operand's buffer through ``out=``
#: (smaller ones gain nothing: allocation is cheap and the keyword argument costs time)
IN_PLACE_MIN_SIZE = 1 << 12
#: the same through an augmented assignment, which costs nothing extra to call
AUGMENTED_MIN_SIZE = 64


# ------------------------------------------------------------------------------------------
# Passes on equations
# ------------------------------------------------------------------------------------------

#: largest constant (in elements) that folding may create
_FOLD_LIMIT = 1 << 12


def _is_literal(x) -> bool:
    return type(x) is Literal


def literal_key(lit: Literal):
    """A hashable key that tells literals apart exactly: by type and bits (``-0.0`` is not
    ``0.0``, ``1`` not ``1.0``); arrays folded into a jaxpr, by identity."""
    val = lit.val
    t = type(val)
    if t is float:
        return (t, val.hex(), lit.aval.weak_type)
    if t is int or t is bool:
        return (t, val, lit.aval.weak_type)
    if isinstance(val, np.ndarray) and val.ndim:
        return ("array", id(val))
    bits = np.asarray(val)
    return (t, bits.dtype.str, bits.tobytes(), lit.aval.weak_type)


#: parameter types that are their own key (the common ones first, for speed)
_PLAIN_PARAMS = frozenset({int, bool, str, type(None)})


def _frozen(value):
    """A parameter as a hashable value in which floats are their bits."""
    t = type(value)
    if t in _PLAIN_PARAMS:
        return value
    if t is tuple:
        return tuple([_frozen(v) for v in value])
    if t is float or t is complex or isinstance(value, np.inexact):
        return (t, repr(value))
    return value


def params_key(params: dict):
    """``params`` as a hashable key (floats by their bits: a parameter of ``-0.0`` is not
    one of ``0.0``), or None when a parameter is unhashable (jaxprs hash by identity)."""
    try:
        key = tuple(sorted([(k, _frozen(v)) for k, v in params.items()]))
        hash(key)
        return key
    except TypeError:
        return None


def _inline(jaxpr: Jaxpr, args: list, eqns: list) -> list:
    """Append the equations of ``jaxpr`` applied to the atoms ``args`` to ``eqns`` (call
    primitives inlined recursively, every variable fresh); returns the output atoms."""
    env: dict = dict(zip(jaxpr.invars, args))

    def read(x):
        return x if type(x) is Literal else env[x]

    for eqn in jaxpr.eqns:
        ins = [read(x) for x in eqn.invars]
        rule = _lowering(eqn.primitive).inline
        if rule is not None:
            closed = rule(**eqn.params)
            inner_args = [Literal(c, ShapedArray(np.shape(c), np.asarray(c).dtype))
                          for c in closed.consts] + ins
            inner = Jaxpr([], list(closed.jaxpr.constvars) + list(closed.jaxpr.invars),
                          closed.jaxpr.eqns, closed.jaxpr.outvars)
            outs = _inline(inner, inner_args, eqns)
            env.update(zip(eqn.outvars, outs))
            continue
        outs = [Var(v.aval) for v in eqn.outvars]
        env.update(zip(eqn.outvars, outs))
        eqns.append(JaxprEqn(eqn.primitive, ins, eqn.params, outs))
    return [read(x) for x in jaxpr.outvars]


def _fold(eqn: JaxprEqn):
    """The result of ``eqn`` computed now, as a Literal, if its operands are all literals
    and the result is small; else None."""
    prim = eqn.primitive
    if (prim.multiple_results or prim not in impl_rules or _lowering(prim).inline
            or eqn_has_effects(eqn)):
        return None
    aval = eqn.outvars[0].aval
    if int(np.prod(aval.shape)) > _FOLD_LIMIT:
        return None
    try:
        value = impl_rules[prim](*[x.val for x in eqn.invars], **eqn.params)
    except Exception:  # leave the error to run time, where it is reported as usual
        return None
    if not isinstance(value, (np.ndarray, np.generic)):
        return Literal(value, aval) if not isinstance(value, (list, tuple)) else None
    value = np.asarray(value)
    if value.shape != aval.shape or value.dtype != aval.dtype:
        return None
    if value.ndim == 0:
        value = value.item() if aval.weak_type else value[()]
    else:
        value.setflags(write=False)
    return Literal(value, aval)


def _uses(eqns: list, outvars: list) -> dict:
    """id(var) -> the equations reading it (outputs count as a use by None)."""
    uses: dict = {}
    for eqn in eqns:
        for x in eqn.invars:
            if type(x) is Var:
                uses.setdefault(id(x), []).append(eqn)
    for x in outvars:
        if type(x) is Var:
            uses.setdefault(id(x), []).append(None)
    return uses


def _broadcast_ok(eqns: list, outvars: list) -> set:
    """ids of broadcast equations' results that NumPy broadcasting makes unnecessary: every
    reader broadcasts NumPy-style and gets the same result shape from the operand."""
    uses = _uses(eqns, outvars)
    droppable = set()
    for eqn in eqns:
        rule = _lowering(eqn.primitive).numpy_broadcast
        if rule is None:
            continue
        src, out = eqn.invars[0], eqn.outvars[0]
        if not rule(src.aval, out.aval, **eqn.params):
            continue
        readers = uses.get(id(out), [])
        ok = bool(readers)
        for reader in readers:
            if reader is None or not _lowering(reader.primitive).broadcasting:
                ok = False
                break
            shapes = [src.aval.shape if x is out else x.aval.shape for x in reader.invars]
            try:
                if np.broadcast_shapes(*shapes) != reader.outvars[0].aval.shape:
                    ok = False
                    break
            except ValueError:
                ok = False
                break
        if ok:
            droppable.add(id(out))
    # Checked one by one above; two dropped operands of one reader (both of x * y
    # broadcast from (3,) to (2, 3)) would change its shape: keep such broadcasts.
    sources = {id(e.outvars[0]): e.invars[0].aval.shape for e in eqns
               if e.outvars and id(e.outvars[0]) in droppable}
    changed = True
    while changed:
        changed = False
        for eqn in eqns:
            if not _lowering(eqn.primitive).broadcasting:
                continue
            dropped = [x for x in eqn.invars if type(x) is Var and id(x) in droppable]
            if len(dropped) < 2:
                continue
            shapes = [sources[id(x)] if type(x) is Var and id(x) in droppable
                      else x.aval.shape for x in eqn.invars]
            if np.broadcast_shapes(*shapes) != eqn.outvars[0].aval.shape:
                droppable.discard(id(dropped[0]))  # one at a time, then check again
                changed = True
    return droppable


def _forward_pass(eqns: list, outs: list) -> tuple[list, list]:
    """Simplification, constant folding and common-subexpression elimination, in one pass
    in program order (each rewrite sees the rewritten operands)."""
    subst: dict = {}

    def read(x):
        while type(x) is Var and id(x) in subst:
            x = subst[id(x)]
        return x

    seen: dict = {}
    splats: dict = {}  # id(var) -> the scalar Literal a numpy-style broadcast spreads
    producers: dict = {}  # id(var) -> the kept equation computing it
    kept = []
    work = collections.deque(eqns)
    while work:
        eqn = work.popleft()
        ins = [read(x) for x in eqn.invars]
        eqn = JaxprEqn(eqn.primitive, ins, eqn.params, eqn.outvars)
        lowering = _lowering(eqn.primitive)
        if not eqn.primitive.multiple_results:
            out = eqn.outvars[0]
            rewrite = lowering.rewrite
            replacement = rewrite(ins, producers.get, **eqn.params) if rewrite else None
            if replacement is not None:
                work.extendleft(reversed(_equations(replacement, eqn.outvars)))
                continue
            if (lowering.numpy_broadcast is not None and type(ins[0]) is Literal
                    and ins[0].aval.shape == ()):
                splats[id(out)] = ins[0]
            elif (lowering.broadcasting and
                  any(id(x) in splats for x in ins) and
                  all(type(x) is Literal and x.aval.shape == () or id(x) in splats
                      for x in ins)):
                # An operation on broadcast constants is the broadcast of its value.
                scalar = ShapedArray((), out.aval.dtype, out.aval.weak_type)
                folded = _fold(JaxprEqn(eqn.primitive,
                                        [splats.get(id(x), x) for x in ins],
                                        eqn.params, [Var(scalar)]))
                if folded is not None and _splat:
                    prim = _splat[0]
                    eqn = JaxprEqn(prim, [folded], prim.lowering.splat(out.aval.shape),
                                   eqn.outvars)
                    lowering = prim.lowering
                    ins = eqn.invars
                    splats[id(out)] = folded
            rule = lowering.simplify
            index = rule(ins, out.aval, **eqn.params) if rule is not None else None
            if index is not None:
                assert (ins[index].aval.shape == out.aval.shape
                        and ins[index].aval.dtype == out.aval.dtype), (
                    f"simplifying {eqn.primitive} changed the type of its result")
                subst[id(out)] = ins[index]
                continue
            if ins and out.aval.shape == () and all(type(x) is Literal for x in ins):
                folded = _fold(eqn)
                if folded is not None:
                    subst[id(out)] = folded
                    continue
        eqn_params = params_key(eqn.params)
        if eqn_params is not None and not eqn_has_effects(eqn):  # each effect happens
            operand_keys = tuple(literal_key(x) if type(x) is Literal else (id(x),)
                                 for x in ins)
            if lowering.commutative:
                operand_keys = tuple(sorted(operand_keys, key=repr))
            key = (eqn.primitive, operand_keys, eqn_params)
            previous = seen.get(key)
            if previous is not None:
                for old, new in zip(eqn.outvars, previous.outvars):
                    subst[id(old)] = new
                continue
            seen[key] = eqn
        kept.append(eqn)
        for v in eqn.outvars:
            producers[id(v)] = eqn
    return kept, [read(x) for x in outs]


def _equations(steps: list, outvars: list) -> list:
    """Equations for a rewrite's ``[(primitive, operands, params), ...]``: each step's
    result is a fresh variable its successors may read as ``Ref(i)``; the last step
    computes ``outvars``."""
    eqns: list = []
    results: list = []
    for i, (prim, operands, params) in enumerate(steps):
        ins = [results[x.index] if type(x) is Ref else x for x in operands]
        if i == len(steps) - 1:
            outs = outvars
        else:
            avals = abstract_eval_out_avals(prim, [x.aval for x in ins], params)
            outs = [Var(a) for a in avals]
        eqns.append(JaxprEqn(prim, ins, params, outs))
        results.append(outs[0])
    return eqns


class Ref:
    """In a rewrite's steps: the result of step ``index``."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


def _drop_numpy_broadcasts(eqns: list, outs: list) -> tuple[list, list]:
    droppable = _broadcast_ok(eqns, outs)
    if not droppable:
        return eqns, outs
    source = {id(e.outvars[0]): e.invars[0] for e in eqns if id(e.outvars[0]) in droppable}

    def read(x):
        return source.get(id(x), x) if type(x) is Var else x

    return ([JaxprEqn(e.primitive, [read(x) for x in e.invars], e.params, e.outvars)
             for e in eqns if id(e.outvars[0]) not in droppable], [read(x) for x in outs])


def _dead_code_elimination(eqns: list, outs: list) -> list:
    live = {id(x) for x in outs}
    kept = []
    for eqn in reversed(eqns):
        if any(id(v) in live for v in eqn.outvars) or eqn_has_effects(eqn):
            kept.append(eqn)
            live.update(id(x) for x in eqn.invars)
    kept.reverse()
    return kept


def optimize_jaxpr(jaxpr: Jaxpr) -> tuple[list, list, list]:
    """The passes of the module docstring: ``(invars, equations, output atoms)``."""
    invars = [Var(v.aval) for v in jaxpr.invars]
    eqns: list = []
    outs = _inline(Jaxpr([], jaxpr.invars, jaxpr.eqns, jaxpr.outvars), invars, eqns)
    eqns, outs = _forward_pass(eqns, outs)
    eqns, outs = _drop_numpy_broadcasts(_dead_code_elimination(eqns, outs), outs)
    eqns, outs = _forward_pass(eqns, outs)  # what dropping broadcasts exposed (x * 1)
    return invars, _dead_code_elimination(eqns, outs), outs


# ------------------------------------------------------------------------------------------
# Fusion
# ------------------------------------------------------------------------------------------
#
# With llvmlite or numba installed (``pip install functrans[fast]``) and
# ``functrans.config.fusion`` on, maximal regions of elementwise equations of one output
# shape (primitives with a ``Lowering.kernel``, and broadcasts NumPy broadcasting
# expresses) become one equation: a loop over the output that reads each operand once and
# writes each result the rest of the program reads once, instead of one NumPy call and one
# temporary array per operation.  The region's scalar program (``_RegionBody``) is compiled
# by LLVM into a NumPy ufunc (``llvm_kernels``: NumPy broadcasts, allocates and checks the
# floating-point flags as for its own ufuncs; the object code is cached in the user's cache
# directory, keyed by the IR and the host CPU, so a new process loads it instead of
# compiling).  Regions ending in reductions, and regions LLVM's translation does not take,
# are numba loops (``_kernel_plan``: a source file in the same directory named by the hash
# of its text, compiled with numba's ``cache=True``) where numba is installed.

#: a region is fused when it computes at least this many operations (broadcasts do not
#: count) and the cost model below expects the loop to be faster than NumPy's calls
FUSION_MIN_OPS = 2
#: a region is closed at this many operations and the next begins: LLVM's passes take
#: time growing faster than the loop's length (about 0.2 s at 500 operations, 2.6 s at
#: 2,300 and 29 s at 7,000 as one loop), so a longer program compiles in bounded pieces,
#: each writing its results to memory once
FUSION_MAX_OPS = 512
#: fuse every region of FUSION_MIN_OPS operations, whatever the cost model says (tests)
FUSION_ALWAYS = False
#: on dask arrays, ``jit`` writes each elementwise region as one ``blockwise`` call (one
#: task per chunk) instead of one dask call per operation ("Dask regions" below)
DASK_REGIONS = True
#: on dask arrays, ``jit`` writes each stretch of equations that keep chunks of rows apart
#: as one ``blockwise`` call over the chunks of rows ("Row regions" below)
ROW_REGIONS = True
#: a row region's task runs its equations compiled for the chunk's array library and row
#: count (NumPy code with fused loops where fusion is on), not one impl call each
ROW_CHUNKS_COMPILED = True
#: primitives whose impl, not their lowering, the code for a lazy library calls: those of
#: the core-axes table (``primitives/chunked.py`` registers them), whose impl on dask
#: arrays gathers core axes or maps chunks where dask's own function refuses or is missing
LAZY_IMPL: set = set()
#: ``"llvm"``: regions compiled by LLVM into NumPy ufuncs where the translation takes them,
#: the others by numba; ``"numba"``: every region by numba (the environment variable
#: ``FUNCTRANS_FUSION_COMPILER`` sets it at start-up)
FUSION_COMPILER = "numba" if os.environ.get("FUNCTRANS_FUSION_COMPILER") == "numba" else "llvm"

# The cost model, in nanoseconds per call and per element (measured on x86-64, one thread:
# a NumPy call on a small array ~500; an arithmetic ufunc ~0.3 per element while its
# operands stay in the caches, ~2 more beyond (a temporary array written to memory and
# read back); NumPy's vectorised libm functions ~2 per element more than arithmetic (tanh
# 1.7, exp 0.8, sin 8.3).  The fused loop: ~1500 to call (numba's dispatch, the outputs'
# allocation), ~0.15 per element and operation, ~8 per element for each libm call
# (numba's are scalar C library calls: tanh 9.7, exp 4.3, sin 8.4)).  So arithmetic
# regions are fused from three operations on at every size, regions of libm functions
# only where NumPy's per-call cost dominates (small arrays, many operations).
_NUMPY_CALL, _NUMPY_ELEMENT, _NUMPY_MEMORY, _NUMPY_LIBM = 500.0, 0.3, 2.0, 2.0
_LOOP_CALL, _LOOP_ELEMENT, _LOOP_LIBM = 1500.0, 0.15, 8.0
#: a loop LLVM compiled is a NumPy ufunc: a call costs about what NumPy's own cost
_UFUNC_CALL = 600.0
#: per element beyond an addition, NumPy's function (most vectorised with AVX-512) and
#: the loop's scalar libm call, by name (``python benchmarks/bench_libm.py``, 4,096
#: float64 elements); others are taken at ``_NUMPY_LIBM`` and ``_LOOP_LIBM``
_LIBM_COSTS = {"tanh": (1.5, 8.5), "exp": (0.6, 3.8), "sin": (7.9, 7.9), "cos": (7.9, 7.8),
               "log": (0.7, 3.0), "log1p": (0.8, 4.7), "expm1": (1.0, 4.1),
               "arctan": (1.0, 7.7), "sinh": (1.0, 8.1), "cosh": (0.8, 5.8),
               "log2": (0.9, 3.0), "log10": (0.7, 5.6), "exp2": (0.5, 2.4),
               "arcsin": (1.1, 3.9), "cbrt": (0.8, 10.1), "tan": (1.2, 8.5),
               "arctanh": (1.4, 9.1),
               # LLVM's intrinsics, vectorised like NumPy's loops
               "abs": (0.0, 0.0), "sqrt": (0.0, 0.0), "floor": (0.0, 0.0),
               "ceil": (0.0, 0.0), "isfinite": (0.0, 0.0)}
#: arrays of more elements than this leave the caches between NumPy calls
_CACHED_ELEMENTS = 1 << 16


def _libm_cost(names: list, which: int) -> float:
    """Per element, the libm functions ``names``: NumPy's (``which`` 0) or the loop's (1)."""
    default = (_NUMPY_LIBM, _LOOP_LIBM)
    return sum(_LIBM_COSTS.get(name, default)[which] for name in names)


def _worth_fusing(size: int, ops: int, libm: list, call: float = _LOOP_CALL) -> bool:
    """The cost model above: the loop (``call`` to call it) is expected to beat NumPy's
    calls; ``libm``: the names of the libm functions among the ``ops`` operations.  (On
    one thread: ``config.fusion_parallel`` splits the loops this model chose, and never
    changes the program, so that its bits are those of one thread.)"""
    if FUSION_ALWAYS:
        return True
    element = _NUMPY_ELEMENT + (_NUMPY_MEMORY if size > _CACHED_ELEMENTS else 0.0)
    numpy_cost = ops * (_NUMPY_CALL + size * element) + size * _libm_cost(libm, 0)
    loop_cost = call + size * (ops * _LOOP_ELEMENT + _libm_cost(libm, 1))
    return loop_cost < numpy_cost


def _lanes(shape: tuple, keep) -> int:
    """The threads a loop LLVM compiles over ``shape`` runs on (``config.fusion_parallel``:
    its leading axis, where its reductions, over the axes from ``keep`` on, keep it)."""
    if (not config.fusion_parallel or keep == 0 or not shape or shape[0] < 2
            or int(np.prod(shape, dtype=np.int64)) < PARALLEL_ELEMENTS
            or "llvm" not in _fusion_compilers()):
        return 1
    return min(_threads(), shape[0])


def _libm_apart_pays(region) -> bool:
    """Whether ``region``'s libm functions are better left to NumPy (vectorised) and the
    arithmetic between them fused, than all of it in one loop calling scalar libm
    functions; the arithmetic may then be several loops, one more than the libm calls at
    most."""
    if FUSION_ALWAYS:
        return False
    names = [e.primitive.name for e in region.eqns
             if _member_kind(e, libm=False) is None]
    size = int(np.prod(region.shape, dtype=np.int64))
    call = _UFUNC_CALL if "llvm" in _fusion_compilers() else _LOOP_CALL
    element = _NUMPY_ELEMENT + (_NUMPY_MEMORY if size > _CACHED_ELEMENTS else 0.0)
    together = call + size * (region.ops * _LOOP_ELEMENT + _libm_cost(names, 1))
    apart = (len(names) * (_NUMPY_CALL + size * element) + size * _libm_cost(names, 0)
             + (len(names) + 1) * call + size * (region.ops - len(names)) * _LOOP_ELEMENT)
    return apart < together


#: the dtypes fused loops compute in (numba has no float16; complex stays with NumPy)
_KERNEL_DTYPES = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float32, np.float64))


def scalar_kernel(template: str, kinds: str = "f", same: bool = True) -> Callable:
    """A ``Lowering.kernel`` writing ``template.format(*operands)`` when every operand's
    dtype is of a kind in ``kinds`` (``"f"``: floating point; ``"biuf"``: any real) and,
    with ``same``, all operands have one dtype."""
    def kernel(operands, in_dtypes, out_dtype, **params):
        if any(d.kind not in kinds for d in in_dtypes):
            return None
        if same and any(d != in_dtypes[0] for d in in_dtypes):
            return None
        return template.format(*operands)
    return kernel


@functools.lru_cache(maxsize=1)
def _numba_installed() -> bool:
    import importlib.util
    return importlib.util.find_spec("numba") is not None


@functools.lru_cache(maxsize=1)
def _llvmlite_installed() -> bool:
    import importlib.util
    return importlib.util.find_spec("llvmlite") is not None


def _fusion_compilers() -> tuple:
    """The compilers of fused loops on the CPU, in the order they are tried: ``"llvm"``
    (regions as NumPy ufuncs, ``llvm_kernels``) and ``"numba"`` (the loops of
    ``_kernel_plan``), those installed and chosen by ``FUSION_COMPILER``."""
    chosen = ("llvm", "numba") if FUSION_COMPILER == "llvm" else ("numba",)
    installed = {"llvm": _llvmlite_installed(), "numba": _numba_installed()}
    return tuple(c for c in chosen if installed[c])


def fusion_active(library=None) -> bool:
    """Whether ``compile_jaxpr`` fuses elementwise regions for ``library`` now: with
    ``functrans.config.fusion`` on, into loops compiled by LLVM or numba on NumPy (llvmlite
    or numba installed), into CuPy kernels on CuPy (see "GPU kernels"); on dask, into one
    ``blockwise`` call per region whatever ``config.fusion`` says (``DASK_REGIONS``: "Dask
    regions")."""
    return _fusion_target(library or backend.library_of()) is not None


def _fusion_target(library):
    """``"cpu"`` (LLVM or numba loops), ``"cuda"`` (CuPy kernels), ``"dask"`` (one
    ``blockwise`` per region, on lazy libraries while ``DASK_REGIONS`` is on) or None (no
    fusion)."""
    if library.lazy:
        return "dask" if DASK_REGIONS else None
    if not config.fusion:
        return None
    if library.xp is np:
        return "cpu" if _fusion_compilers() else None
    # CuPy (or its stand-in in the tests, which runs the regions' equations)
    return "cuda" if getattr(library.xp, "__name__", "").startswith("cupy") else None


class _CodePrimitive:
    """The "primitive" of an equation only the code generator writes (a fused region, a
    ufunc compiled by LLVM, a scatter-add loop, a dask region): its name and its lowering
    rule, whose results are new arrays (``fresh``)."""

    __slots__ = ("name", "multiple_results", "lowering", "impl")
    effectful = False  # as a Primitive's: optimize_jaxpr may drop or merge its equations

    def __init__(self, name: str, rule: Callable, multiple_results: bool = True,
                 impl: Callable | None = None):
        self.name = name
        self.multiple_results = multiple_results
        self.impl = impl  # for RowRegion.evaluate, where there is one
        self.lowering = Lowering()
        self.lowering.rule = rule
        self.lowering.fresh = True
        assert _code_primitives.setdefault(name, self) is self, name

    def __repr__(self):
        return self.name

    def __reduce__(self):  # by name (row regions go to a cluster's workers)
        return _code_primitive, (self.name,)


_code_primitives: dict = {}


def _code_primitive(name: str) -> _CodePrimitive:
    return _code_primitives[name]


def _fused_rule(ctx, *operands, kernel, shape, scalar_inputs):
    # A loop on the CPU takes arrays.  A CuPy kernel takes a scalar as an argument of the
    # launch (an array made of it would be a copy to the device per call), but the first
    # of inputs all scalars is made an array: the kernel's call finds its library by it.
    if isinstance(kernel, CudaKernel):
        scalar_inputs = {0} if len(scalar_inputs) == len(operands) else set()
    args = [f"{ctx.xp}.asarray({x})" if i in scalar_inputs else x
            for i, x in enumerate(operands)]
    return f"{ctx.bind(kernel, 'fk')}({', '.join(args + [repr(tuple(shape))])})"


_FUSED = _CodePrimitive("fused", _fused_rule)


def _literal_dtype(eqn: JaxprEqn, x):
    """The dtype a scalar literal operand of ``eqn`` computes in (NumPy's conversion of a
    Python scalar beside arrays), or None."""
    if _is_weak_scalar(x):
        dtype = _scalar_operand_dtype(eqn)
        if dtype is None:
            return None
        return np.dtype(dtype)
    return np.dtype(x.aval.dtype)


def _scalar_literal_source(val, dtype: np.dtype) -> str | None:
    """Source for the scalar ``val`` converted to ``dtype`` inside a kernel, or None.
    (Not memoised: -0.0 equals 0.0, and a cache keyed by value would confuse them.)"""
    try:
        typed = np.array(val, dtype=dtype)
    except (TypeError, OverflowError, ValueError):
        return None
    if dtype.kind in "biu" and typed.item() != val:
        return None
    item = typed.item()
    if dtype.kind == "f":
        text = repr(float(item))
        if not np.isfinite(item):
            text = "np.nan" if np.isnan(item) else ("np.inf" if item > 0 else "-np.inf")
        return f"np.{dtype.name}({text})"
    return f"np.{dtype.name}({item!r})"


def _kernel_expression(eqn: JaxprEqn, operands: list, dtypes: list):
    record = _lowering(eqn.primitive)
    if record.kernel is None:
        return None
    return record.kernel(operands, dtypes, eqn.outvars[0].aval.dtype, **eqn.params)


def _member_kind(eqn: JaxprEqn, libm: bool = True):
    """``"op"`` for an equation a fused loop can compute (with ``libm`` False, not one
    calling a libm function), ``"broadcast"`` for a broadcast NumPy broadcasting
    expresses, else None."""
    prim = eqn.primitive
    if prim.multiple_results or len(eqn.outvars) != 1:
        return None
    out = eqn.outvars[0].aval
    if np.dtype(out.dtype) not in _KERNEL_DTYPES:
        return None
    record = _lowering(prim)
    if record.reduction is not None:
        return "reduce" if _trailing_reduction(eqn) is not None else None
    if record.numpy_broadcast is not None:
        src = eqn.invars[0]
        if (type(src) is Var and np.dtype(src.aval.dtype) == np.dtype(out.dtype)
                and record.numpy_broadcast(src.aval, out, **eqn.params)):
            return "broadcast"
        return None
    if record.kernel is None:
        return None
    dtypes = []
    for x in eqn.invars:
        if type(x) is Literal and not np.ndim(x.val):
            dtype = _literal_dtype(eqn, x)
            if dtype is None or _scalar_literal_source(x.val, dtype) is None:
                return None
        else:
            dtype = np.dtype(x.aval.dtype)
        if dtype not in _KERNEL_DTYPES:
            return None
        shape = tuple(x.aval.shape)
        if shape != tuple(out.shape):  # (the common case, equal shapes, tested first)
            try:
                if np.broadcast_shapes(shape, tuple(out.shape)) != tuple(out.shape):
                    return None
            except ValueError:
                return None
        dtypes.append(dtype)
    expr = _kernel_expression(eqn, [f"x{i}" for i in range(len(dtypes))], dtypes)
    if expr is None or not libm and _LIBM_CALL.search(expr):
        return None
    return "op"


def _trailing_reduction(eqn: JaxprEqn):
    """For a reduction a fused loop can end with (``Lowering.reduction``): the number of
    leading axes it keeps, the operand's axes from there on being the ones reduced (over
    at least one element, so that max and min are defined); else None."""
    src = eqn.invars[0]
    if type(src) is not Var:
        return None
    dtype = np.dtype(src.aval.dtype)
    if dtype != np.dtype(eqn.outvars[0].aval.dtype) or dtype.kind not in "iuf":
        return None
    shape = tuple(src.aval.shape)
    axes = sorted(a % len(shape) for a in eqn.params.get("axes", ())) if shape else []
    keep = len(shape) - len(axes)
    if not axes or axes != list(range(keep, len(shape))) or not all(shape[keep:]):
        return None
    return keep


class _Region:
    __slots__ = ("shape", "eqns", "defined", "ops", "libm", "reduced", "keep")

    def __init__(self, shape):
        self.shape = shape
        self.eqns: list = []
        self.defined: set = set()
        self.ops = 0
        self.libm = False  # some operation calls a libm function
        self.reduced: set = set()  # ids of the results of the region's reductions
        self.keep = None  # the leading axes its reductions keep (all reduce alike)


def _fuse(eqns: list, outs: list, uses: dict | None = None,
          libm: bool = True, target: str = "cpu", reductions: bool = True) -> tuple[list, list]:
    """``eqns`` with maximal regions of elementwise equations of one output shape, worth
    fusing (``FUSION_MIN_OPS``, ``_worth_fusing``), each replaced by one fused equation
    placed where the region's first result is needed; and the kernels' sources.  A region
    with libm calls that does not pay is tried again with those calls left to NumPy (its
    arithmetic between them may still pay).  ``uses``: the readers of every variable of
    the whole program (``_uses``); ``libm``: whether libm calls may join regions;
    ``target``: ``"cpu"`` for numba loops (kernels: their sources), ``"cuda"`` for CuPy
    kernels (kernels: ``CudaKernel`` objects; no cost model: every launch saved pays),
    ``"dask"`` for dask graphs (kernels: ``DaskRegion`` objects; no reductions, and no
    cost model: every task saved pays).  ``reductions``: whether reductions may end
    regions (a CuPy kernel computes one reduction and nothing else: a region with more is
    fused again without them)."""
    if uses is None:
        uses = _uses(eqns, outs)
    result: list = []
    kernels: list = []
    open_regions: dict = {}  # shape -> _Region
    owner: dict = {}  # id(var) -> the open region defining it

    def close(region):
        del open_regions[region.shape]
        for e in region.eqns:
            owner.pop(id(e.outvars[0]), None)
        if region.ops >= FUSION_MIN_OPS or target == "dask" and len(region.eqns) > 1:
            if libm and region.libm and target == "cpu" and _libm_apart_pays(region):
                inner, inner_kernels = _fuse(region.eqns, [], uses, libm=False)
                result.extend(inner)
                kernels.extend(inner_kernels)
                return
            fused = (_fused_equation(region, uses) if target == "cpu"
                     else _dask_fused_equation(region, uses) if target == "dask"
                     else _cuda_fused_equation(region, uses))
            if fused is not None:
                result.append(fused[0])
                kernels.append(fused[1])
                return
            if libm and region.libm and target == "cpu":
                inner, inner_kernels = _fuse(region.eqns, [], uses, libm=False)
                result.extend(inner)
                kernels.extend(inner_kernels)
                return
            if target == "cuda" and region.reduced:
                # one ReductionKernel computes one value: the region's elementwise part as
                # an ElementwiseKernel, its reductions CuPy's calls after it
                inner, inner_kernels = _fuse(region.eqns, [], uses, target="cuda",
                                             reductions=False)
                result.extend(inner)
                kernels.extend(inner_kernels)
                return
        result.extend(region.eqns)

    for eqn in eqns:
        if target == "cpu" and _lowering(eqn.primitive).scatter == "add":
            operand = eqn.invars[0]
            producer = next((e for e in reversed(result)
                             if type(operand) is Var and e.outvars[0] is operand), None)
            zeros = (_makes_zeros(producer) and uses.get(id(operand)) == [eqn])
            loop = _scatter_add_loop(eqn, zeros)
            if loop is not None and zeros:
                result.remove(producer)  # the loop makes the zeros
            eqn = loop or eqn
        kind = _member_kind(eqn, libm)
        if kind == "reduce" and (target == "dask" or not reductions):
            kind = None  # dask's own reduction (a tree over the chunks) follows the region
        if kind == "reduce":
            # a reduction joins the open region computing its operand, over its trailing
            # axes (the region's other reductions keeping as many leading axes)
            region = owner.get(id(eqn.invars[0]))
            keep = _trailing_reduction(eqn)
            if (region is None or region.keep not in (None, keep)
                    or id(eqn.invars[0]) in region.reduced):
                kind = region = None
            shape = region.shape if region is not None else None
        else:
            shape = tuple(eqn.outvars[0].aval.shape) if kind else None
            region = open_regions.get(shape) if kind else None
        if kind == "broadcast" and region is not None and id(eqn.invars[0]) in region.defined:
            kind = region = None  # a broadcast of the region's own result: not one loop
        # Regions whose results this equation reads must be written first (a region's
        # reduction is complete only after its loop).
        for x in eqn.invars:
            other = owner.get(id(x)) if type(x) is Var else None
            if other is None or other.shape not in open_regions:
                continue
            if other is not region or id(x) in getattr(other, "reduced"):
                close(other)
                if other is region:
                    region = None
        if not kind:
            result.append(eqn)
            continue
        if region is None:
            region = open_regions[shape] = _Region(shape)
        region.eqns.append(eqn)
        region.defined.add(id(eqn.outvars[0]))
        owner[id(eqn.outvars[0])] = region
        if kind == "reduce":
            region.reduced.add(id(eqn.outvars[0]))
            region.keep = keep
            region.ops += 1
        elif kind == "op":
            region.ops += 1
            region.libm = region.libm or _member_kind(eqn, libm=False) is None
            if region.ops >= FUSION_MAX_OPS:
                close(region)
    for region in list(open_regions.values()):
        close(region)
    return result, kernels


def _fused_equation(region: _Region, uses: dict):
    """The fused equation computing ``region`` and its kernel (a ``UfuncKernel``, or a
    numba kernel's source), or None."""
    compilers = _fusion_compilers()
    if "llvm" in compilers:
        fused = _ufunc_equation(region, uses)
        if fused is not None:
            return fused
    if "numba" not in compilers:
        return None
    plan = _kernel_plan(region, uses)
    if plan is None:
        return None
    inputs, outputs, source = plan
    kernel = _load_kernel(source)
    if not _compiles(kernel, [np.dtype(x.aval.dtype) for x in inputs],
                     [len(x.aval.shape) for x in inputs], len(region.shape)):
        return None  # left to NumPy
    scalar_inputs = frozenset(i for i, x in enumerate(inputs) if not x.aval.shape)
    params = dict(kernel=kernel, shape=region.shape, scalar_inputs=scalar_inputs)
    eqn = JaxprEqn(_FUSED, inputs, params, outputs)  # type: ignore[arg-type]
    return eqn, source


def _ufunc_rule(ctx, *operands, kernel, allocate, split=None):
    # Python scalars (arguments) are given the loop's dtype; without ``allocate`` (the
    # outputs' shapes and dtypes) NumPy allocates the outputs.  ``split``: the region's
    # shape, whose leading axis the call splits among threads (``_split_call``)
    args = [f"{ctx.xp}.asarray({x}, {ctx.bind(ctx.in_avals[i].dtype, 'dtype')})"
            if ctx.is_literal[i] and not ctx.in_avals[i].shape else x
            for i, x in enumerate(operands)]
    if allocate:
        outs = "".join(f"{ctx.xp}.empty({shape!r}, {ctx.bind(d, 'dtype')}), "
                       for shape, d in allocate)
        if split is not None:
            return (f"{ctx.bind(_split_call, 'split')}({ctx.bind(kernel.ufunc, 'fk')}, "
                    f"({', '.join(args)}{',' if len(args) == 1 else ''}), ({outs}), "
                    f"{len(split)})")
        args.append(f"out=({outs})")
    call = f"{ctx.bind(kernel.ufunc, 'fk')}({', '.join(args)})"
    return f"({call},)" if len(ctx.out_avals) == 1 else call


# ------------------------------------------------------------------------------------------
# Fused loops on several threads (``functrans.config.fusion_parallel``)
# ------------------------------------------------------------------------------------------
#
# NumPy runs a ufunc's loop without the GIL, so a fused loop over a large array can run on
# several threads: the region's leading axis (never one its reductions reduce) is cut into
# one block of rows per thread, each thread calling the ufunc on its rows of the operands
# that span that axis (the others, broadcast along it, whole) and of the outputs.  Every
# element, and every reduction over trailing axes, is computed as on one thread: the same
# bits.  Each block runs in the caller's context (``contextvars``), so ``np.errstate``
# applies; an error raised in a block is raised by the call once every block is done.

#: a fused loop over at least this many elements runs on several threads when
#: ``config.fusion_parallel`` is on (below, a thread's start costs more than it saves)
PARALLEL_ELEMENTS = 1 << 17
_pool: list = []  # the process's thread pool, made at first use


def _threads() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _split_call(ufunc, operands: tuple, outputs: tuple, ndim: int) -> tuple:
    """``ufunc(*operands, out=outputs)`` by blocks of the leading axis, one per thread."""
    import contextvars
    from concurrent.futures import ThreadPoolExecutor
    rows = outputs[0].shape[0]
    parts = min(_threads(), rows)
    if parts < 2:
        ufunc(*operands, out=outputs)
        return outputs
    if not _pool:
        _pool.append(ThreadPoolExecutor(_threads(), thread_name_prefix="functrans-fused"))
    bounds = [rows * k // parts for k in range(parts + 1)]

    def block(lo, hi):
        ufunc(*(x[lo:hi] if getattr(x, "ndim", 0) == ndim and x.shape[0] == rows else x
                for x in operands), out=tuple(o[lo:hi] for o in outputs))

    futures = [_pool[0].submit(contextvars.copy_context().run, block, lo, hi)
               for lo, hi in zip(bounds[1:-1], bounds[2:])]
    error = None
    try:
        block(bounds[0], bounds[1])
    except BaseException as e:  # raised once every block is done
        error = e
    for future in futures:
        try:
            future.result()
        except BaseException as e:
            error = error or e
    if error is not None:
        raise error
    return outputs


_UFUNC = _CodePrimitive("fused_ufunc", _ufunc_rule)
#: the most operands (inputs and outputs) a NumPy ufunc takes (NPY_MAXARGS, NumPy >= 2.0)
_UFUNC_MAX_OPERANDS = 64


def _ufunc_equation(region: _Region, uses: dict):
    """The equation computing ``region`` with a NumPy ufunc compiled by LLVM (a
    generalised ufunc over the reduced axes for a region ending in reductions), and its
    ``UfuncKernel``; or None (no exact translation, no gain)."""
    shape = tuple(region.shape)
    ndim = len(shape)
    if not shape:
        return None
    body = _region_body(region, uses)
    if body is None or not (body.outputs or body.reductions):
        return None
    if not _worth_fusing(int(np.prod(shape)), len(body.statements) + len(body.reductions),
                         _libm_names(body), _UFUNC_CALL):
        return None
    keep = body.keep if body.reductions else ndim  # the axes outside the core (reduced) ones
    outputs = [(name, np.dtype(out.aval.dtype)) for out, name in body.outputs]
    results = [out for out, _ in body.outputs] + [out for *_, out in body.reductions]
    if len(body.inputs) + len(results) > _UFUNC_MAX_OPERANDS:
        return None  # NumPy refuses such a ufunc: numba's loop (or NumPy code) then
    reductions = [(kind, name, dtype) for kind, name, dtype, _ in body.reductions]
    directory = _kernel_directory()
    before = dict(llvm_kernels.counts)
    loop_shapes = []  # the inputs' shapes there
    inputs: list = []
    for x, subscript in zip(body.inputs, body.subscripts):
        xshape = tuple(x.aval.shape)
        offset = ndim - len(xshape)
        loop_shapes.append(xshape[:max(keep - offset, 0)])
        if keep == ndim:
            inputs.append((np.dtype(x.aval.dtype), all(d is None for d in subscript)))
            continue
        core = tuple(None if a - offset < 0 else
                     ("broadcast" if subscript[a - offset] is None else "span")
                     for a in range(keep, ndim))
        inputs.append((np.dtype(x.aval.dtype), core))
    if keep == ndim:
        kernel = llvm_kernels.ufunc_kernel(inputs, body.statements, outputs, directory)
    else:
        kernel = llvm_kernels.gufunc_kernel(inputs, body.statements, outputs, reductions,
                                            ndim - keep, directory)
    if kernel is None:
        return None
    for key, count in llvm_kernels.counts.items():
        _kernel_counts[key] += count - before[key]
    allocate = None
    split = _lanes(shape, keep) > 1
    if np.broadcast_shapes(*loop_shapes) != shape[:keep] or keep == 0 or split:
        allocate = tuple((tuple(out.aval.shape), np.dtype(out.aval.dtype)) for out in results)
    params = dict(kernel=kernel, allocate=allocate)
    if split:
        params["split"] = shape
    eqn = JaxprEqn(_UFUNC, list(body.inputs), params, results)  # type: ignore[arg-type]
    return eqn, kernel


class _RegionBody:
    """A fused region as scalar code: what the CPU (numba) and GPU (CUDA) kernels are
    both written from.  ``inputs``: the atoms read from outside, in order (``x{i}`` in the
    body); ``subscripts[i]``: the loop indices input ``i`` is read at (None where it is
    broadcast); ``statements``: ``(name, dtype, expression)`` in order, each a scalar of
    the region; ``reductions``: ``(kind, name, dtype, result)`` for each reduction ending
    the region, over the trailing axes from ``keep`` on; ``outputs``: the region's
    results the rest of the program reads, with the scalar names computing them."""

    __slots__ = ("shape", "inputs", "subscripts", "statements", "reductions", "outputs",
                 "keep")

    def __init__(self, shape):
        self.shape = shape
        self.inputs: list = []
        self.subscripts: list = []
        self.statements: list = []
        self.reductions: list = []
        self.outputs: list = []  # (var, scalar name), full-shape results
        self.keep = len(shape)


def _region_body(region: _Region, uses: dict):
    """``region`` as a ``_RegionBody``, or None where some operation has no scalar code."""
    members = {id(e) for e in region.eqns}
    shape = region.shape
    ndim = len(shape)
    body = _RegionBody(shape)
    input_pos: dict = {}
    local: dict = {}  # id(var) -> the scalar name in the loop body

    def read(x, eqn):
        if type(x) is Var and id(x) in local:
            return local[id(x)], np.dtype(x.aval.dtype)
        if type(x) is Literal and not np.ndim(x.val):
            dtype = _literal_dtype(eqn, x)
            return _scalar_literal_source(x.val, dtype), dtype
        key = id(x)
        if key not in input_pos:
            input_pos[key] = len(body.inputs)
            body.inputs.append(x)
            xshape = tuple(x.aval.shape)
            offset = ndim - len(xshape)
            body.subscripts.append(tuple(
                None if n == 1 and shape[offset + d] != 1 else offset + d
                for d, n in enumerate(xshape)))
        return f"x{input_pos[key]}", np.dtype(x.aval.dtype)

    for k, eqn in enumerate(region.eqns):
        out = eqn.outvars[0]
        dtype = np.dtype(out.aval.dtype)
        lowering = _lowering(eqn.primitive)
        if lowering.numpy_broadcast is not None:
            name, _ = read(eqn.invars[0], eqn)
            local[id(out)] = name
            continue
        if lowering.reduction is not None:
            name, _ = read(eqn.invars[0], eqn)
            body.reductions.append((lowering.reduction, name, dtype, out))
            body.keep = region.keep
            continue
        pairs = [read(x, eqn) for x in eqn.invars]
        expr = _kernel_expression(eqn, [p[0] for p in pairs], [p[1] for p in pairs])
        if expr is None:
            return None
        # numba types float64 arithmetic and libm calls on float64 as float64: no
        # conversion to write (half of the typing work numba does for a long region)
        typed = dtype == np.float64 and all(p[1] == np.float64 for p in pairs)
        body.statements.append((f"t{k}", dtype, expr if typed else f"np.{dtype.name}({expr})"))
        local[id(out)] = f"t{k}"
        if any(reader is None or id(reader) not in members for reader in uses.get(id(out), ())):
            body.outputs.append((out, f"t{k}"))
    # a result read outside that only forwards an input (a broadcast) is not fused
    for eqn in region.eqns:
        out = eqn.outvars[0]
        if (_lowering(eqn.primitive).numpy_broadcast is not None
                and any(reader is None or id(reader) not in members
                        for reader in uses.get(id(out), ()))):
            body.outputs.append((out, local[id(out)]))
    return body


#: the identity a max or min reduction starts from, by dtype kind
def _reduction_start(kind: str, dtype: np.dtype) -> str:
    if kind == "sum":
        return f"np.{dtype.name}(0)"
    if dtype.kind == "f":
        return f"np.{dtype.name}({'-' if kind == 'max' else ''}np.inf)"
    info = np.iinfo(dtype)
    return f"np.{dtype.name}({info.min if kind == 'max' else info.max})"


def _pairwise_helper(dtype: np.dtype) -> list:
    """NumPy's pairwise summation of ``a[lo:lo + n]`` (its ``pairwise_sum``: eight
    accumulators up to blocks of 128 elements, the two halves summed apart above), so
    fused sums of floats give NumPy's bits.  The halving is a loop over an explicit stack:
    numba's cache cannot load a recursive function (the process crashes)."""
    t = f"np.{dtype.name}"
    name = dtype.name
    acc = ", ".join(f"r{j}" for j in range(8))
    first = ", ".join(f"a[lo + {j}]" for j in range(8))
    add = "; ".join(f"r{j} += a[lo + i + {j}]" for j in range(8))
    return [
        "@njit(cache=True, error_model='numpy', nogil=True)",
        f"def block_{name}(a, lo, n):",
        "    if n < 8:",
        f"        res = {t}(0)",
        "        for i in range(n):",
        "            res += a[lo + i]",
        "        return res",
        f"    {acc} = {first}",
        "    i = 8",
        "    while i < n - n % 8:",
        f"        {add}",
        "        i += 8",
        "    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))",
        "    while i < n:",
        "        res += a[lo + i]",
        "        i += 1",
        "    return res",
        "", "",
        "@njit(cache=True, error_model='numpy', nogil=True)",
        f"def pairwise_{name}(a, n):",
        "    if n <= 128:",
        f"        return block_{name}(a, 0, n)",
        "    starts = np.empty(64, np.int64)  # the halves still to sum, depth first",
        "    sizes = np.empty(64, np.int64)",
        "    stage = np.empty(64, np.int64)  # 0: left half next, 1: right half, 2: add",
        f"    sums = np.empty(64, np.{name})",
        "    starts[0], sizes[0], stage[0] = 0, n, 0",
        "    top = 0",
        "    done = 0",
        "    while top >= 0:",
        "        lo, k = starts[top], sizes[top]",
        "        if k <= 128:",
        f"            sums[done] = block_{name}(a, lo, k)",
        "            done += 1",
        "            top -= 1",
        "            continue",
        "        half = k // 2",
        "        half -= half % 8",
        "        if stage[top] == 2:",
        "            done -= 1",
        "            sums[done - 1] = sums[done - 1] + sums[done]",
        "            top -= 1",
        "            continue",
        "        stage[top] += 1",
        "        if stage[top] == 1:",
        "            starts[top + 1], sizes[top + 1] = lo, half",
        "        else:",
        "            starts[top + 1], sizes[top + 1] = lo + half, k - half",
        "        top += 1",
        "        stage[top] = 0",
        "    return sums[0]",
        "", ""]


def _kernel_plan(region: _Region, uses: dict):
    """``(inputs, outputs, source)`` of the numba kernel computing ``region``, or None
    where it has no scalar code, no result, or does not pay (the cost model)."""
    shape = region.shape
    ndim = len(shape)
    if ndim == 0:
        return None
    body = _region_body(region, uses)
    if body is None or not (body.outputs or body.reductions):
        return None
    if not _worth_fusing(int(np.prod(shape)), len(body.statements) + len(body.reductions),
                         _libm_names(body)):
        return None
    index = [f"i{d}" for d in range(ndim)]
    keep = body.keep
    pairwise = sorted({dtype.name for kind, _, dtype, _ in body.reductions
                       if kind == "sum" and dtype.kind == "f"})
    lines = ["import numpy as np", "from numba import njit", "", ""]
    for name in pairwise:
        lines += _pairwise_helper(np.dtype(name))
    args = [f"a{i}" for i in range(len(body.inputs))]
    lines += ["@njit(cache=True, error_model='numpy', nogil=True)",
              f"def kernel({', '.join(args + ['shape'])}):"]
    for j, (out, _) in enumerate(body.outputs):
        lines.append(f"    o{j} = np.empty(shape, np.{np.dtype(out.aval.dtype).name})")
    kept_shape = ("(" + "".join(f"shape[{d}], " for d in range(keep)) + ")") if keep else "1"
    for j, (kind, _, dtype, _) in enumerate(body.reductions):
        lines.append(f"    r{j} = np.empty({kept_shape}, np.{dtype.name})")
    if pairwise:  # sums of fewer than 8 are sequential in NumPy too: no buffer then
        lines.append("    m = 1" + "".join(f" * shape[{d}]" for d in range(keep, ndim)))
        lines.append("    small = m < 8")
    for j, (kind, _, dtype, _) in enumerate(body.reductions):
        if kind == "sum" and dtype.kind == "f":
            lines.append(f"    b{j} = np.empty(m, np.{dtype.name})")
    indent = "    "
    for d in range(ndim):
        if d == keep:
            if pairwise:
                lines.append(f"{indent}p = 0")
            for j, (kind, _, dtype, _) in enumerate(body.reductions):
                lines.append(f"{indent}s{j} = {_reduction_start(kind, dtype)}")
        lines.append(f"{indent}for i{d} in range(shape[{d}]):")
        indent += "    "
    for i, (x, subscript) in enumerate(zip(body.inputs, body.subscripts)):
        at = ", ".join("0" if d is None else index[d] for d in subscript) or "()"
        lines.append(f"{indent}x{i} = a{i}[{at}]")  # an element has the array's dtype
    lines += [f"{indent}{name} = {expr}" for name, _, expr in body.statements]
    full = ", ".join(index)
    for j, (_, name) in enumerate(body.outputs):
        lines.append(f"{indent}o{j}[{full}] = {name}")
    for j, (kind, name, dtype, _) in enumerate(body.reductions):
        if kind == "sum" and dtype.kind == "f":
            lines.append(f"{indent}if small:")
            lines.append(f"{indent}    s{j} += {name}")
            lines.append(f"{indent}else:")
            lines.append(f"{indent}    b{j}[p] = {name}")
        elif kind == "sum":
            lines.append(f"{indent}s{j} = np.{dtype.name}(s{j} + {name})")
        else:  # NumPy's maximum and minimum: the first NaN wins
            op = ">" if kind == "max" else "<"
            lines.append(f"{indent}s{j} = s{j} if s{j} {op} {name} or s{j} != s{j} "
                         f"else {name}")
    if pairwise:
        lines.append(f"{indent}p += 1")
    if body.reductions:
        indent = "    " * (keep + 1)
        kept = ", ".join(index[:keep]) or "0"
        for j, (kind, _, dtype, _) in enumerate(body.reductions):
            value = (f"s{j} if small else np.{dtype.name}(0) + pairwise_{dtype.name}(b{j}, m)"
                     if kind == "sum" and dtype.kind == "f" else f"s{j}")
            lines.append(f"{indent}r{j}[{kept}] = {value}")
    results = [f"o{j}" for j in range(len(body.outputs))]
    results += [f"r{j}" if keep else f"r{j}.reshape(())" for j in range(len(body.reductions))]
    lines.append(f"    return ({''.join(r + ', ' for r in results)})")
    source = "\n".join(lines) + "\n"
    outputs = [out for out, _ in body.outputs] + [out for *_, out in body.reductions]
    return body.inputs, outputs, source


def _compiles(kernel, dtypes: list, ndims: list, ndim: int) -> bool:
    """Compile ``kernel`` now for C-contiguous operands (from the disk cache when it is
    there); False where numba cannot, and the region stays NumPy code.  Other layouts
    (views, read-only constants) are compiled on their first call."""
    import numba
    signature = tuple(numba.types.Array(numba.from_dtype(d), n, "C")
                      for d, n in zip(dtypes, ndims)) + (
        numba.types.UniTuple(numba.types.intp, ndim),)
    key = (id(kernel), signature)
    if key in _compiled_signatures:
        return _compiled_signatures[key]
    hits = sum(kernel.stats.cache_hits.values())
    try:
        kernel.compile(signature)
        ok = True
    except Exception:  # a typing or lowering error: the loop is not written
        ok = False
    if ok:
        loaded = sum(kernel.stats.cache_hits.values()) > hits
        _kernel_counts["loaded" if loaded else "compiled"] += 1
    _compiled_signatures[key] = ok
    return ok


_compiled_signatures: dict = {}
#: fused loops made ready in this process: loaded from numba's disk cache, or compiled
_kernel_counts = collections.Counter(loaded=0, compiled=0)

#: a call of a NumPy function in a kernel's body that is not a conversion to a dtype
_LIBM_CALL = re.compile(r"np\.(?!(?:float|u?int|bool_?)\d*\()(\w+)\(")


def _libm_names(body) -> list:
    """The libm functions a region body's statements call, a name per call."""
    return _LIBM_CALL.findall("\n".join(expr for _, _, expr in body.statements))

_kernels: dict = {}  # hash of a kernel's source -> its compiled function


def _kernel_directory() -> str:
    import os
    root = os.environ.get("FUNCTRANS_CACHE_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                 ".cache")
        root = os.path.join(base, "functrans")
    path = os.path.join(root, "kernels")
    try:
        os.makedirs(path, exist_ok=True)
        if os.access(path, os.W_OK):
            return path
    except OSError:
        pass
    import tempfile
    path = os.path.join(tempfile.gettempdir(), "functrans-kernels")
    os.makedirs(path, exist_ok=True)
    return path


def _load_kernel(source: str):
    """The numba dispatcher of the kernel module ``source``, written once to a file named
    by its hash (numba caches the machine code beside it, for the next process)."""
    import hashlib
    import importlib.util
    import os
    import sys
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    with _lock:
        kernel = _kernels.get(digest)
    if kernel is not None:
        return kernel
    directory = _kernel_directory()
    path = os.path.join(directory, f"fk_{digest}.py")
    if not os.path.exists(path):  # never rewrite: numba keys its cache on the file's time
        temporary = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(temporary, "w") as f:
            f.write(source)
        os.replace(temporary, path)
    spec = importlib.util.spec_from_file_location(f"functrans_kernel_{digest}", path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # numba's cache finds the module's globals by name
    spec.loader.exec_module(module)
    kernel = module.kernel
    kernel.py_file = path
    with _lock:
        kernel = _kernels.setdefault(digest, kernel)
    return kernel


# ------------------------------------------------------------------------------------------
# Scatter-add as one loop
# ------------------------------------------------------------------------------------------
#
# With fusion on NumPy, ``scatter_add`` (``Lowering.scatter == "add"``: the transpose of a
# gather, e.g. the gradient of an embedding table or of rows picked by ``triu_indices``)
# is one loop over the updates instead of NumPy's index arithmetic, ``bincount`` per
# position and ``add.at``.  It adds in the order NumPy does (updates in row-major order;
# where NumPy sums through ``bincount``, float targets receiving many updates, in a
# float64 accumulator added to the operand at the end), so the bits are NumPy's.  Into
# zeros (a gather's transpose) float64 and integer updates are added in one pass, since
# adding them in order to the zeros gives the bits of NumPy's sums.  The
# loop is compiled by LLVM (``llvm_kernels.scatter_add_kernel``, a generalised ufunc
# writing into the target it is given), or by numba from the source below.

_SCATTER_ADD_SOURCE = '''import numpy as np
from numba import njit


@njit(cache=True, error_model='numpy', nogil=True)
def kernel(out, dims, idx, upd, clamp, accumulate, zero):
    n, k = idx.shape
    columns = out.shape[1]
    rows = np.empty(n, np.int64)
    kept = 0
    for b in range(n):
        row = 0
        for j in range(k):
            i = np.int64(idx[b, j])
            d = dims[j]
            if clamp:
                i = min(max(i, 0), max(d - 1, 0))
            elif i < 0 or i >= d:
                row = -1
                break
            row = row * d + i
        rows[b] = row
        if row >= 0:
            kept += 1
    if accumulate and 8 * kept * columns >= out.size:
        # NumPy's bincount: float64 sums per position, added to the whole target in its
        # dtype (0 where nothing was added: -0.0 becomes 0.0); sums kept for touched rows
        slot = np.full(out.shape[0], -1, np.int64)
        used = 0
        for b in range(n):
            row = rows[b]
            if row >= 0 and slot[row] < 0:
                slot[row] = used
                used += 1
        acc = np.zeros((used, columns), np.float64)
        for b in range(n):
            row = rows[b]
            if row >= 0:
                s = slot[row]
                for c in range(columns):
                    acc[s, c] += np.float64(upd[b, c])
        total = acc.astype(out.dtype)
        if zero:  # a target of zeros: 0.0 + 0.0 leaves the untouched rows as they are
            for b in range(n):
                row = rows[b]
                if row >= 0 and slot[row] >= 0:
                    s = slot[row]
                    slot[row] = -1
                    for c in range(columns):
                        out[row, c] += total[s, c]
            return out
        nothing = np.zeros(1, out.dtype)[0]
        for r in range(out.shape[0]):
            s = slot[r]
            if s >= 0:
                for c in range(columns):
                    out[r, c] += total[s, c]
            else:
                for c in range(columns):
                    out[r, c] += nothing
    else:
        for b in range(n):
            row = rows[b]
            if row >= 0:
                for c in range(columns):
                    out[row, c] += upd[b, c]
    return out
'''


def _scatter_add_call(operand, indices, updates, *, clamp: bool, zeros=None,
                      llvm: bool = True):
    """``scatter_add(operand, indices, updates)`` by the loop above; ``zeros``: the
    ``(shape, dtype)`` of an operand of zeros, which is then None; ``llvm``: LLVM's loop
    (the compiler chosen when the program was compiled), else numba's."""
    shape, dtype = zeros if operand is None else (operand.shape, operand.dtype)
    k = indices.shape[-1]
    dims = np.array(shape[:k], dtype=np.int64)
    rest = int(np.prod(shape[k:], dtype=np.int64))
    out = (np.zeros((int(np.prod(shape, dtype=np.int64)) // max(rest, 1), rest), dtype)
           if operand is None else np.array(operand, copy=True).reshape(-1, rest))
    if not out.size:
        return out.reshape(shape)
    indices = np.ascontiguousarray(indices).reshape(-1, k)
    updates = np.ascontiguousarray(updates).reshape(-1, rest)
    accumulate = out.dtype.kind == "f"
    if llvm:
        loop = llvm_kernels.scatter_add_kernel(out.dtype, indices.dtype, _kernel_directory())
        if loop is not None:
            flags = np.int64(clamp + 2 * accumulate + 4 * (operand is None))
            loop.ufunc(dims, indices, updates, flags, out=out)
            return out.reshape(shape)
    kernel = _load_kernel(_SCATTER_ADD_SOURCE)
    kernel(out, dims, indices, updates, clamp, accumulate, operand is None)
    return out.reshape(shape)


def _scatter_add_rule(ctx, *operands, clamp, zeros=None):
    function = ctx.bind(functools.partial(_scatter_add_call, clamp=clamp, zeros=zeros,
                                          llvm="llvm" in _fusion_compilers()),
                        "scatter_add")
    if zeros is not None:
        operands = ("None",) + operands
    return f"{function}({', '.join(operands)})"


_SCATTER_ADD = _CodePrimitive("scatter_add_loop", _scatter_add_rule, multiple_results=False)


def _scatter_add_loop(eqn: JaxprEqn, zeros: bool = False):
    """``eqn`` (a scatter-add) as the loop above, or None where it is not one the loop
    computes as NumPy does (the dtype, an update per index, a known mode).  ``zeros``:
    the operand is zeros read by nothing else, which the loop then makes itself."""
    if len(eqn.invars) != 3 or any(type(x) is not Var for x in eqn.invars):
        return None
    operand, indices, updates = (x.aval for x in eqn.invars)
    mode = eqn.params.get("mode", "clip")
    if set(eqn.params) - {"mode"} or mode not in ("clip", "drop"):
        return None
    dtype = np.dtype(operand.dtype)
    if (dtype not in _KERNEL_DTYPES or dtype.kind not in "iuf" or dtype != updates.dtype
            or np.dtype(indices.dtype).kind not in "iu" or not indices.shape
            or indices.shape[-1] == 0 or indices.shape[-1] > len(operand.shape)):
        return None
    k = indices.shape[-1]
    if tuple(updates.shape) != tuple(indices.shape[:-1]) + tuple(operand.shape[k:]):
        return None
    if 0 in operand.shape[:k]:
        return None
    if zeros:
        params = {"clamp": mode == "clip",
                  "zeros": (tuple(operand.shape), np.dtype(operand.dtype))}
        return JaxprEqn(_SCATTER_ADD, list(eqn.invars[1:]), params,  # type: ignore
                        eqn.outvars)
    return JaxprEqn(_SCATTER_ADD, list(eqn.invars), {"clamp": mode == "clip"},  # type: ignore
                    eqn.outvars)


def _makes_zeros(eqn) -> bool:
    """``eqn`` computes an array of zeros (the AD system's ``zeros_like``)."""
    return eqn is not None and eqn.primitive.name == "zeros_like" and not eqn.invars[1:]


# ------------------------------------------------------------------------------------------
# GPU kernels
# ------------------------------------------------------------------------------------------
#
# On CuPy arrays a fused region becomes one CuPy kernel written from the same scalar code
# (``_RegionBody``): a ``cupy.ElementwiseKernel`` (its operands broadcast against the
# outputs, allocated at the region's shape), or a ``cupy.ReductionKernel`` for a region
# ending in one reduction over its trailing axes whose other values stay inside.  The
# scalar expressions (numba's Python) are translated to CUDA C; a region with something
# the translation does not know stays CuPy calls.  An array library without CuPy's kernel
# classes (the CuPy stand-in of the tests) runs the region's equations one by one.

#: CUDA C types of the dtypes kernels compute in
_C_TYPES = {"bool": "bool", "int8": "signed char", "int16": "short", "int32": "int",
            "int64": "long long", "uint8": "unsigned char", "uint16": "unsigned short",
            "uint32": "unsigned int", "uint64": "unsigned long long", "float32": "float",
            "float64": "double"}
#: numba's NumPy functions in kernels -> CUDA's math functions (C++ overloads by type)
_C_FUNCTIONS = {"exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log", "log2": "log2",
                "log10": "log10", "log1p": "log1p", "sqrt": "sqrt", "cbrt": "cbrt",
                "sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "asin", "arccos": "acos",
                "arctan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh",
                "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "floor": "floor",
                "ceil": "ceil", "abs": "abs", "isfinite": "isfinite", "power": "pow",
                "arctan2": "atan2"}
#: NumPy's NaN and infinity as CUDA C doubles: NVRTC compiles without the C library's
#: headers, so C's NAN and INFINITY macros are undefined there
_C_NAN = "__longlong_as_double(0x7ff8000000000000LL)"
_C_INF = "__longlong_as_double(0x7ff0000000000000LL)"
_C_OPERATORS = {"Add": "+", "Sub": "-", "Mult": "*", "Div": "/", "BitAnd": "&",
                "BitOr": "|", "Lt": "<", "LtE": "<=", "Gt": ">", "GtE": ">=", "Eq": "==",
                "NotEq": "!=", "And": "&&", "Or": "||", "USub": "-", "Not": "!"}


def cuda_expression(expr: str) -> str:
    """A kernel's scalar expression (numba's Python: ``np.tanh(x0)``, ``(a if c else b)``)
    as CUDA C; ValueError for anything it does not know."""
    import ast

    def c(node) -> str:
        kind = type(node).__name__
        if kind == "Name":
            return node.id
        if kind == "Constant" and type(node.value) in (int, float, bool):
            if type(node.value) is bool:
                return "true" if node.value else "false"
            return repr(node.value)
        if (kind == "Attribute" and isinstance(node.value, ast.Name)
                and node.value.id == "np" and node.attr in ("nan", "inf")):
            return _C_NAN if node.attr == "nan" else _C_INF
        if kind == "BinOp" and type(node.op).__name__ in _C_OPERATORS:
            return f"({c(node.left)} {_C_OPERATORS[type(node.op).__name__]} {c(node.right)})"
        if kind == "UnaryOp" and type(node.op).__name__ in _C_OPERATORS:
            return f"({_C_OPERATORS[type(node.op).__name__]}{c(node.operand)})"
        if kind == "BoolOp":
            op = f" {_C_OPERATORS[type(node.op).__name__]} "
            return "(" + op.join(c(v) for v in node.values) + ")"
        if kind == "Compare" and len(node.ops) == 1:
            compare = _C_OPERATORS.get(type(node.ops[0]).__name__)
            if compare is not None:
                return f"({c(node.left)} {compare} {c(node.comparators[0])})"
        if kind == "IfExp":
            return f"({c(node.test)} ? {c(node.body)} : {c(node.orelse)})"
        if (kind == "Call" and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "np"
                and not node.keywords):
            name, args = node.func.attr, [c(a) for a in node.args]
            ctype = _C_TYPES.get("bool" if name == "bool_" else name)
            if ctype is not None and len(args) == 1:
                return f"(({ctype})({args[0]}))"
            if name in _C_FUNCTIONS:
                return f"{_C_FUNCTIONS[name]}({', '.join(args)})"
        raise ValueError(f"no CUDA translation for {ast.dump(node)}")

    return c(ast.parse(expr, mode="eval").body)


class CudaKernel:
    """A fused region as one CuPy kernel: ``source`` is the kernel as CuPy is given it;
    calling it with the region's inputs and shape returns its outputs.  ``kind``:
    ``"elementwise"`` or ``"reduction"``; ``fallback`` runs the region's equations one by
    one (for array libraries without CuPy's kernel classes)."""

    __slots__ = ("kind", "name", "in_params", "out_params", "operation", "preamble",
                 "map_expr", "reduce_expr", "identity", "reduce_type", "out_dtypes",
                 "axes", "eqns", "inputs", "outputs", "source", "_compiled")
    kind: str
    name: str
    in_params: str
    out_params: str
    operation: str
    preamble: str
    map_expr: str
    reduce_expr: str
    identity: str
    reduce_type: str
    out_dtypes: list
    axes: tuple
    eqns: list
    inputs: list
    outputs: list
    source: str
    _compiled: dict

    def __init__(self, **fields):
        for name in self.__slots__:
            setattr(self, name, fields.get(name))
        self._compiled = {}
        self.source = self._source()

    def _source(self) -> str:
        if self.kind == "elementwise":
            return (f"cupy.ElementwiseKernel(\n    in_params={self.in_params!r},\n"
                    f"    out_params={self.out_params!r},\n    name={self.name!r},\n"
                    f"    operation='''\n{self.operation}''')\n")
        return (f"cupy.ReductionKernel(\n    in_params={self.in_params!r},\n"
                f"    out_params={self.out_params!r},\n    map_expr={self.map_expr!r},\n"
                f"    reduce_expr={self.reduce_expr!r},\n    post_map_expr='r0 = a',\n"
                f"    identity={self.identity!r},\n    reduce_type={self.reduce_type!r},\n"
                f"    name={self.name!r},\n    preamble='''\n{self.preamble}''')\n")

    def _kernel(self, xp):
        kernel = self._compiled.get(xp)
        if kernel is None:
            if self.kind == "elementwise":
                kernel = xp.ElementwiseKernel(self.in_params, self.out_params,
                                              self.operation, self.name)
            else:
                kernel = xp.ReductionKernel(self.in_params, self.out_params, self.map_expr,
                                            self.reduce_expr, "r0 = a", self.identity,
                                            self.name, reduce_type=self.reduce_type,
                                            preamble=self.preamble)
            self._compiled[xp] = kernel
        return kernel

    def __call__(self, *args):
        *inputs, shape = args
        xp = backend.array_module(*[x for x in inputs if backend.is_array(x)])
        if not hasattr(xp, "ElementwiseKernel"):
            return self.fallback(inputs)
        kernel = self._kernel(xp)
        inputs = list(backend.coerce(xp, *inputs))  # 0-d host arrays as scalars
        if self.kind == "elementwise":
            outs = tuple(xp.empty(shape, d) for d in self.out_dtypes)
            kernel(*inputs, *outs)
            return outs
        # the reduction's shape is that of its array inputs broadcast: each at the region's
        # (scalars stay arguments of the launch)
        inputs = [xp.broadcast_to(x, shape) if backend.is_device_array(x) else x
                  for x in inputs]
        return (kernel(*inputs, axis=self.axes),)

    def fallback(self, inputs) -> tuple:
        """The region's equations one by one, by their impl rules."""
        env = {id(v): x for v, x in zip(self.inputs, inputs)}

        def read(x):
            return x.val if type(x) is Literal else env[id(x)]

        for eqn in self.eqns:
            env[id(eqn.outvars[0])] = impl_rules[eqn.primitive](
                *[read(x) for x in eqn.invars], **eqn.params)
        return tuple(env[id(v)] for v in self.outputs)

    def __repr__(self):
        return f"CudaKernel({self.name})"


def _cuda_fused_equation(region: _Region, uses: dict):
    """The fused equation computing ``region`` with a CuPy kernel, and the kernel; or
    None where the region has no CUDA translation or no result."""
    if not region.shape:
        return None
    body = _region_body(region, uses)
    if body is None or not (body.outputs or body.reductions):
        return None
    if body.reductions and (len(body.reductions) > 1 or body.outputs):
        return None  # a ReductionKernel computes one value
    try:
        statements = [f"{_C_TYPES[dtype.name]} {name} = {cuda_expression(expr)};"
                      for name, dtype, expr in body.statements]
    except (ValueError, KeyError, SyntaxError):
        return None
    in_params = ", ".join(f"{np.dtype(x.aval.dtype).name} x{i}"
                          for i, x in enumerate(body.inputs))
    import hashlib
    digest = hashlib.sha256("\n".join(statements).encode()).hexdigest()[:12]
    name = f"functrans_fused_{digest}"
    common = dict(name=name, in_params=in_params, eqns=list(region.eqns),
                  inputs=list(body.inputs))
    if not body.reductions:
        outs = [out for out, _ in body.outputs]
        operation = "\n".join(statements + [f"o{j} = {local};" for j, (_, local)
                                           in enumerate(body.outputs)]) + "\n"
        kernel = CudaKernel(kind="elementwise", operation=operation, outputs=outs,
                            out_params=", ".join(f"{np.dtype(o.aval.dtype).name} o{j}"
                                                 for j, o in enumerate(outs)),
                            out_dtypes=[np.dtype(o.aval.dtype) for o in outs], **common)
    else:
        kind, local, dtype, out = body.reductions[0]
        ctype = _C_TYPES[dtype.name]
        if kind == "sum":
            reduce_expr, identity = "a + b", "0"
        else:  # NaN wins on whichever side it is, as in NumPy's max and min
            op = ">" if kind == "max" else "<"
            reduce_expr = f"(a != a) ? a : ((b != b) ? b : ((a {op} b) ? a : b))"
            if dtype.kind == "f":
                identity = f"{'-' if kind == 'max' else ''}{_C_INF}"
            else:
                info = np.iinfo(dtype)
                value = info.min if kind == "max" else info.max
                # C has no literal for the most negative long long: one more, less one
                text = (f"{value + 1}LL - 1" if value < -2**31 else
                        f"{value}ULL" if value >= 2**63 else f"{value}LL")
                identity = f"({ctype})({text})"
        c_params = ", ".join(f"{_C_TYPES[np.dtype(x.aval.dtype).name]} x{i}"
                             for i, x in enumerate(body.inputs))
        args = ", ".join(f"x{i}" for i in range(len(body.inputs)))
        preamble = (f"__device__ {ctype} {name}_map({c_params}) {{\n"
                    + "".join(f"    {line}\n" for line in statements)
                    + f"    return {local};\n}}\n")
        kernel = CudaKernel(kind="reduction", out_params=f"{dtype.name} r0",
                            map_expr=f"{name}_map({args})", reduce_expr=reduce_expr,
                            identity=identity, reduce_type=ctype, preamble=preamble,
                            outputs=[out], out_dtypes=[dtype],
                            axes=tuple(range(body.keep, len(region.shape))), **common)
    scalar_inputs = frozenset(i for i, x in enumerate(body.inputs) if not x.aval.shape)
    params = dict(kernel=kernel, shape=region.shape, scalar_inputs=scalar_inputs)
    eqn = JaxprEqn(_FUSED, list(body.inputs), params, list(kernel.outputs))  # type: ignore
    return eqn, kernel


# ------------------------------------------------------------------------------------------
# Dask regions
# ------------------------------------------------------------------------------------------
#
# On dask arrays each operation the generated code calls adds a task per chunk.  With the
# ``"dask"`` target, each maximal elementwise region of ``_fuse`` (without reductions: dask's
# own tree reduction follows the region) becomes one ``dask.array.blockwise`` call instead,
# whose task computes the region's equations on one chunk of each input with their impl
# rules (NumPy calls on NumPy chunks, CuPy calls on CuPy chunks): one task per chunk per
# region, and for a region read in several places one more per chunk and result, picking it
# out of the task's tuple.


def _dask_region_rule(ctx, *operands, region):
    return f"{ctx.bind(region, 'region')}({', '.join(operands)})"


_DASK_FUSED = _CodePrimitive("dask_region", _dask_region_rule)


class DaskRegion:
    """An elementwise region of a jitted program as one ``dask.array.blockwise`` call:
    calling it with the region's inputs gives a tuple of its results as lazy dask arrays,
    one task per chunk.  ``eqns``: the region's equations (all of result shape ``shape``);
    ``inputs``: the atoms they read from outside, in order; ``outputs``: the results the
    rest of the program reads.  Inputs align on the right, as NumPy broadcasts them (an
    axis of size 1 is read for every chunk of the others); the results' chunks are the
    inputs' and their meta (NumPy- or CuPy-backed chunks) the first dask input's.  Inputs
    that are not dask arrays (NumPy arrays, Python scalars) are taken as dask takes them;
    with no dask input at all the region is evaluated at once."""

    __slots__ = ("eqns", "inputs", "outputs", "shape", "token", "source")

    def __init__(self, eqns: list, inputs: list, outputs: list, shape: tuple,
                 token: str | None = None):
        import uuid
        self.eqns = eqns
        self.inputs = inputs
        self.outputs = outputs
        self.shape = tuple(shape)
        self.token = token or uuid.uuid4().hex
        self.source = _describe(f"a dask region: one blockwise task per chunk, shape "
                                f"{self.shape}", eqns, inputs, outputs)

    def __reduce__(self):  # to the workers of a cluster
        return (DaskRegion, (self.eqns, self.inputs, self.outputs, self.shape, self.token))

    def __dask_tokenize__(self):
        return ("functrans-dask-region", self.token)

    def __repr__(self):
        return f"DaskRegion({len(self.eqns)} equations, shape {self.shape})"

    def evaluate(self, blocks) -> tuple:
        """The region's results for one block of each input (NumPy or CuPy arrays, or the
        scalars given), broadcast to the blocks' common shape."""
        env = {id(x): b for x, b in zip(self.inputs, blocks)}

        def read(x):
            return x.val if type(x) is Literal and id(x) not in env else env[id(x)]

        for eqn in self.eqns:
            out = eqn.outvars[0]
            if _lowering(eqn.primitive).numpy_broadcast is not None:
                env[id(out)] = read(eqn.invars[0])  # NumPy broadcasting does it
                continue
            env[id(out)] = impl_rules[eqn.primitive](*[read(x) for x in eqn.invars],
                                                     **eqn.params)
        arrays = [b for b in blocks if backend.is_array(b)]
        xp = backend.array_module(*arrays) if arrays else np
        shape = np.broadcast_shapes(*(tuple(b.shape) for b in arrays))
        return tuple(_output_value(xp, env[id(v)], v.aval.dtype, shape) for v in self.outputs)

    def __call__(self, *args) -> tuple:
        if not any(backend.is_lazy(a) for a in args):
            return self.evaluate(args)
        import dask.array as da
        from dask.array.utils import meta_from_array
        lazy = next(a for a in args if backend.is_lazy(a))
        n = len(self.shape)
        index = tuple(range(n))
        pairs: list = []
        for a in args:
            if backend.is_lazy(a):
                backend.check_known_chunks(a, "jit")
                pairs += [a, index[n - a.ndim:]]
            elif backend.is_array(a) and a.ndim:
                pairs += [backend.asarray(a, like=lazy), index[n - a.ndim:]]
            else:
                pairs += [a, None]
        metas = [meta_from_array(lazy._meta, ndim=n, dtype=np.dtype(v.aval.dtype))
                 for v in self.outputs]
        if len(self.outputs) == 1:
            return (da.blockwise(functools.partial(_region_block, self), index, *pairs,
                                 token="jit-region", dtype=metas[0].dtype,
                                 meta=metas[0]),)
        tuples = da.blockwise(functools.partial(_region_blocks, self), index, *pairs,
                              token="jit-region", dtype=object,
                              meta=np.empty((0,) * n, dtype=object))
        # blockwise, not map_blocks: the latter's name=/token= changed meaning across
        # dask's versions (2024.8 warns of token=, newer ones take name= as the whole key)
        return tuple(da.blockwise(functools.partial(_region_pick, j=j), index, tuples, index,
                                  token="jit-region-result", dtype=meta.dtype, meta=meta)
                     for j, meta in enumerate(metas))


def _output_value(xp, r, dtype, shape: tuple):
    """A region's result ``r`` (an array, or a scalar) as an array of ``xp`` of ``dtype``,
    broadcast to ``shape``."""
    dtype = np.dtype(dtype)
    if not backend.is_array(r) or r.dtype != dtype:
        r = xp.asarray(r, dtype=dtype)
    if tuple(r.shape) != shape:
        r = xp.broadcast_to(r, shape)
    return r


def _region_blocks(region: DaskRegion, *blocks) -> tuple:
    return region.evaluate(blocks)


def _region_block(region: DaskRegion, *blocks):
    return region.evaluate(blocks)[0]


def _region_pick(results: tuple, j: int):
    return results[j]


def _dask_fused_equation(region: _Region, uses: dict):
    """The equation computing ``region`` as one ``DaskRegion``, and the region; or None
    for a 0-d region, and for one that broadcasts its inputs to a larger shape by itself
    (no input spans some axis of its shape: blockwise takes the chunks from the inputs)."""
    shape = region.shape
    if not shape:
        return None
    members = {id(e) for e in region.eqns}
    defined: set = set()
    inputs: list = []
    seen: set = set()
    for eqn in region.eqns:
        for x in eqn.invars:
            if type(x) is Literal and not np.ndim(x.val):
                continue  # a scalar constant: written into the task
            if id(x) not in defined and id(x) not in seen:
                seen.add(id(x))
                inputs.append(x)
        defined.add(id(eqn.outvars[0]))
    outputs = [e.outvars[0] for e in region.eqns
               if any(r is None or id(r) not in members for r in uses.get(id(e.outvars[0]), ()))]
    if not outputs:
        return None
    n = len(shape)
    for d, size in enumerate(shape):
        if size != 1 and not any(
                len(x.aval.shape) >= n - d and x.aval.shape[d - n + len(x.aval.shape)] == size
                for x in inputs):
            return None
    dask_region = DaskRegion(list(region.eqns), inputs, outputs, shape)
    eqn = JaxprEqn(_DASK_FUSED, inputs, dict(region=dask_region), outputs)  # type: ignore
    return eqn, dask_region


# ------------------------------------------------------------------------------------------
# Row regions
# ------------------------------------------------------------------------------------------
#
# Data split into chunks of rows (dask arrays chunked along their first axis only) meets
# parameters small enough to be whole in every task: a loss over the rows, its gradient,
# per-example gradients.  Most of such a program acts on each chunk of rows by itself
# (elementwise work, products with the parameters, reductions along other axes), and its
# reductions over the rows (``sum(r)``, ``Xᵀ r``) are sums of one *partial* per chunk.  On
# dask, ``jit`` writes each maximal stretch of those equations as one ``blockwise`` call
# (a ``RowRegion``): one task per chunk of rows computes all of them on that chunk (the
# impl rules on NumPy or CuPy chunks) and returns the chunk's rows of the results read
# later and its partials of the reductions, which dask's tree reduction then combines.  A
# chunk of data is then read by one task, once: fewer tasks than one dask call per
# operation, and a worker drops each chunk as soon as that task ran.
#
# Which arrays are rowed is decided by shapes when the program is compiled: the leading
# axis of the largest argument gives the row count ``n``, and every array whose leading
# axis has ``n`` elements is rowed.  The primitives' ``rows`` rules say which equations
# keep chunks of rows apart.  The arguments' chunks are seen only when the region is
# called: rowed dask inputs are brought to the largest one's row chunks; NumPy inputs are
# split alike; a rowed dask input split along another axis as well makes the region
# compute its equations one dask call each instead (as without regions).
#
# Gathers and scatters usually move data between rows, but not when the positions they
# use in the first axis are each row's own number: ``x[arange(n), labels]``,
# ``take_along_axis(x, labels[:, None], 1)``, a batched gather of ``vmap`` (a column of the
# batch members' numbers put in front of the positions), and the scatter-adds of their
# gradients.  A pass before the regions (``_row_facts``) follows facts about the rows'
# numbers through the program (``Lowering.numbers``): ``ROW_NUMBERS`` (every element is
# its row's number: ``iota`` over the rows, broadcast, reshaped, converted), a frozenset
# of columns (those columns of the last axis hold it: a concatenation of positions),
# ``NEVER`` (an array of False: ``i < 0`` for row numbers, the wrap of negative positions
# that indexing adds).  Such a gather or scatter (``Lowering.positions``) joins a region
# with its positions in axis 0 replaced by the chunk's own row numbers (``local_rows``),
# and an ``iota`` over the rows is computed by each task from its chunk's first row
# (``row_index``, reading the region's row ``offset``).


def rowed(aval, n: int) -> bool:
    """Whether an array of type ``aval`` is rowed for the row count ``n``."""
    return bool(len(aval.shape)) and aval.shape[0] == n


def rows_elementwise(n, in_avals, out_aval, **params):
    """``Lowering.rows`` of an elementwise primitive whose operands broadcast as NumPy's
    do: rowed result, each operand rowed (of the result's rank) or reaching the result's
    rows only through broadcasting (a lower rank, or a leading axis of one element)."""
    if not rowed(out_aval, n):
        return None
    rank = len(out_aval.shape)
    for a in in_avals:
        if len(a.shape) == rank:
            if a.shape[0] not in (n, 1):
                return None
        elif rowed(a, n):
            return None  # its leading axis lines up with a later axis of the result
    return "rows", ()


def rows_reduction(kind: str) -> Callable:
    """``Lowering.rows`` of a reduction (parameter ``axes``) that combines as ``kind``
    (``"sum"``, ``"max"``, ``"min"``): over the rows, partials; along other axes only, a
    rowed result."""
    def rule(n, in_avals, out_aval, *, axes, **params):
        if not rowed(in_avals[0], n):
            return None
        return (kind, ()) if along(0, axes, in_avals[0]) else ("rows", ())
    return rule


def along(axis: int, axes, aval) -> bool:
    """Whether ``axes`` (of an array of type ``aval``; negative ones count from the end)
    include ``axis``."""
    rank = len(aval.shape)
    return any(a % rank == axis for a in axes) if rank else False


#: ``Lowering.numbers`` facts: every element is its row's number ...
ROW_NUMBERS = "row numbers"
#: ... a boolean array of False only
NEVER = "never"


def row_columns(fact, aval) -> frozenset:
    """The columns (positions along the last axis) of an array of type ``aval`` of rank 2
    or more that hold their rows' numbers, by ``fact``."""
    if len(aval.shape) < 2:
        return frozenset()
    if fact == ROW_NUMBERS:
        return frozenset(range(aval.shape[-1]))
    return fact if isinstance(fact, frozenset) else frozenset()


def numbers_kept(fact, operand_aval, out_aval, n: int, last_kept: bool):
    """``Lowering.numbers`` of a primitive that moves each row's elements within that row
    (a reshape, a broadcast, an added or removed axis) and, if ``last_kept``, each
    column of the last axis to the same column: the operand's ``fact``, where it still
    holds."""
    if fact is None or not (rowed(operand_aval, n) and rowed(out_aval, n)):
        return None
    if fact == ROW_NUMBERS:
        return fact
    if last_kept and len(out_aval.shape) >= 2:
        return row_columns(fact, operand_aval) or None
    return None


def _row_facts(eqns: list, n: int) -> dict:
    """``id(var) -> fact`` for the variables of ``eqns`` that the primitives' ``numbers``
    rules know something about."""
    facts: dict = {}
    for eqn in eqns:
        rule = _lowering(eqn.primitive).numbers
        if rule is None or eqn.primitive.multiple_results:
            continue
        ins = [(np.asarray(x.val).item() if not np.ndim(x.val) else None)
               if type(x) is Literal else facts.get(id(x)) for x in eqn.invars]
        fact = rule(n, [x.aval for x in eqn.invars], eqn.outvars[0].aval, ins,
                    **eqn.params)
        if fact is not None:
            facts[id(eqn.outvars[0])] = fact
    return facts


def _row_positions(eqn: JaxprEqn, n: int, facts: dict) -> str | None:
    """How ``eqn``, of a primitive with ``Lowering.positions``, keeps chunks of rows apart:
    ``"local"`` when it reads and writes each row of operand 0 at that row alone (operand
    0 rowed, positions of at least one batch axis whose first column holds the rows'
    numbers); ``"whole"`` when each row of the result reads operand 0 whole at that row's
    positions (a gather of an operand that is not rowed by rowed positions); ``"shared"``
    when the rows are the first of the axes that operand 0 and the positions share (param
    ``batch_dims``), which keeps each row's positions to that row; else None.  The other
    array operands are rowed."""
    at = _lowering(eqn.primitive).positions
    if at is None or eqn.primitive.multiple_results:
        return None
    positions = eqn.invars[at]
    shape = positions.aval.shape
    if (type(positions) is Literal or len(shape) < 2 or not rowed(positions.aval, n)
            or not rowed(eqn.outvars[0].aval, n)
            or not all(rowed(x.aval, n) or not x.aval.shape
                       for i, x in enumerate(eqn.invars) if i not in (0, at))):
        return None
    if not rowed(eqn.invars[0].aval, n):
        return "whole" if type(eqn.invars[0]) is not Literal else None
    if eqn.params.get("batch_dims"):  # the rows are an axis the operand and positions share
        return "shared"
    if shape[-1] >= 1 and 0 in row_columns(facts.get(id(positions)), positions.aval):
        return "local"
    return None


def _row_rule(prim: Primitive):
    record = _lowering(prim)
    if record.rows is not None:
        return record.rows
    if record.kernel is not None or record.broadcasting or record.ufunc is not None:
        return rows_elementwise
    return None


def _row_kind(eqn: JaxprEqn, n: int, facts: dict):
    """``(kind, sized)`` of ``Lowering.rows`` for ``eqn`` (kind ``"positions"``: a gather
    or scatter at each row's own number), or None."""
    prim = eqn.primitive
    if prim.effectful or not prim.multiple_results and len(eqn.outvars) != 1:
        return None
    how = _row_positions(eqn, n, facts)
    if how in ("whole", "shared"):
        return "rows", ()
    if how == "local":
        return "positions", ()
    rule = _row_rule(prim)
    if rule is None:
        return None
    in_avals = []
    for x in eqn.invars:
        if type(x) is Literal and np.ndim(x.val) and rowed(x.aval, n):
            return None  # a rowed constant: not split into chunks
        in_avals.append(x.aval)
    outs = [v.aval for v in eqn.outvars]
    found = rule(n, in_avals, outs if prim.multiple_results else outs[0], **eqn.params)
    if found is None:
        return None
    kind, sized = found
    assert kind in ("rows", "sum", "max", "min", "same", "row_index"), kind
    assert kind not in ("rows", "row_index") or all(rowed(out, n) for out in outs), (
        eqn, "a rows rule must give rowed results")
    if kind == "row_index":
        assert not prim.multiple_results and len(outs[0].shape) == 1, eqn
        return kind, ()
    if kind != "rows" and (prim.multiple_results or rowed(outs[0], n)):
        return None  # a reduction whose result happens to have n leading elements
    return kind, tuple(sized)


def _row_count(invars: list) -> int | None:
    """The row count of a program with arguments ``invars``: the leading length of its
    largest argument (None: no argument of two rows or more)."""
    best = None
    for v in invars:
        shape = tuple(v.aval.shape)
        if shape and shape[0] > 1 and (best is None or math.prod(shape) > math.prod(best)):
            best = shape
    return None if best is None else best[0]


def _row_regions(eqns: list, outs: list, n: int) -> tuple[list, list]:
    """``eqns`` with maximal stretches of equations that keep chunks of rows apart (their
    ``Lowering.rows``) each replaced by one ``RowRegion`` equation; and the regions.  The
    equations outside a region that read its results (or what those compute) come right
    after it, in their order (a loss's value beside its gradient); a region ends where
    one of its own equations would read one of its reductions (the partials must be
    combined first) or a result of those equations after it."""
    uses = _uses(eqns, outs)
    facts = _row_facts(eqns, n)
    offset = Var(ShapedArray((), np.dtype(np.int64)))  # a chunk's first row's number
    result: list = []
    regions: list = []
    originals: list = []  # the equations of the region being formed, as in the program
    members: list = []  # the same as the region computes them on chunks
    kinds: list = []
    defined: set = set()
    reduced: set = set()
    same: set = set()  # results every task computes whole
    deferred: list = []  # equations outside the region that read its results, in order
    later: set = set()  # their results

    def close():
        if len(originals) >= 2:
            region = _row_region(list(members), list(kinds), uses, n, offset,
                                 {id(e) for e in originals})
            result.append(JaxprEqn(_ROWS, region.inputs, dict(region=region),
                                   region.outputs))
            regions.append(region)
        else:
            result.extend(originals)
        result.extend(deferred)
        deferred.clear()
        later.clear()
        originals.clear()
        members.clear()
        kinds.clear()
        defined.clear()
        reduced.clear()
        same.clear()

    for eqn in eqns:
        kind = _row_kind(eqn, n, facts)
        reads = [id(x) for x in eqn.invars if type(x) is Var and id(x) in defined]
        if (kind is None and reads and all(r in same for r in reads)
                and len(eqn.outvars) == 1 and not rowed(eqn.outvars[0].aval, n)
                and not eqn.primitive.multiple_results and not eqn.primitive.effectful
                and _row_rule(eqn.primitive) is not None):
            kind = ("same", ())  # reshaping or combining values every task has whole
        late = any(type(x) is Var and id(x) in later for x in eqn.invars)
        if kind is None and (reads or late or deferred and eqn_has_effects(eqn)):
            # after the region (the loss's value beside the gradient); effects keep order
            deferred.append(eqn)
            later.update(id(v) for v in eqn.outvars)
            continue
        if kind is not None and (late or any(r in reduced for r in reads)):
            close()  # it needs the region's partials combined, or what comes after it
            reads = []
        if kind is not None and kind[0] == "same" and not reads:
            kind = None  # the same whole value in every task: only beside the region's rows
        if kind is None:
            result.append(eqn)
            continue
        originals.append(eqn)
        if kind[0] == "row_index":  # computed from the chunk's first row's number
            (out,) = eqn.outvars
            eqn = JaxprEqn(_ROW_INDEX, [offset], dict(  # type: ignore[arg-type]
                dtype=np.dtype(out.aval.dtype), shape=tuple(out.aval.shape)), [out])
            kind = ("rows", ("shape",))
        elif kind[0] == "positions":  # at the chunk's own rows: local positions
            at = _lowering(eqn.primitive).positions
            local = Var(eqn.invars[at].aval)
            members.append(JaxprEqn(_LOCAL_ROWS, [eqn.invars[at]], {},  # type: ignore
                                    [local]))
            kinds.append(("rows", ()))
            eqn = JaxprEqn(eqn.primitive, [local if i == at else x
                                           for i, x in enumerate(eqn.invars)],
                           eqn.params, eqn.outvars)
            kind = ("rows", ())
        members.append(eqn)
        kinds.append(kind)
        defined.update(id(v) for v in eqn.outvars)
        if kind[0] in ("sum", "max", "min"):
            reduced.add(id(eqn.outvars[0]))
        elif kind[0] == "same":
            same.add(id(eqn.outvars[0]))
    close()
    return result, regions


def _row_region(eqns: list, kinds: list, uses: dict, n: int, offset: Var,
                originals: set) -> RowRegion:
    """The region of ``eqns`` (as computed on chunks; ``originals``: the ids of the
    program's equations they stand for) whose rows chunk ``offset`` numbers."""
    members = {id(e) for e in eqns} | originals
    defined: set = set()
    inputs: list = []
    seen: set = set()
    numbered = False
    for eqn in eqns:
        for x in eqn.invars:
            if type(x) is Literal:
                continue  # a constant (a small one, or folding would not have made it)
            if x is offset:
                numbered = True
            elif id(x) not in defined and id(x) not in seen:
                seen.add(id(x))
                inputs.append(x)
        defined.update(id(v) for v in eqn.outvars)
    outputs, combine = [], []
    for eqn, (kind, _) in zip(eqns, kinds):
        for v in eqn.outvars:
            if any(r is None or id(r) not in members for r in uses.get(id(v), ())):
                outputs.append(v)
                combine.append({"rows": None, "same": "first"}.get(kind, kind))
    return RowRegion(eqns, [k[1] for k in kinds], inputs, outputs, combine, n,
                     offset=offset if numbered else None)


def _rows_rule(ctx, *operands, region):
    return f"{ctx.bind(region, 'rows')}({', '.join(operands)})"


_ROWS = _CodePrimitive("row_region", _rows_rule)


def _row_index_impl(offset, *, dtype, shape):
    """The numbers of the rows ``offset, offset + 1, ...`` of a chunk of ``shape``: made
    as integers and converted, which gives the whole ``arange``'s rounding of each in a
    floating type (``arange(offset, ..., dtype=float32)`` does not above 2**24)."""
    numbers = np.arange(offset, offset + shape[0], dtype=np.int64)
    return numbers if np.dtype(dtype) == numbers.dtype else numbers.astype(dtype)


def _row_index_rule(ctx, offset, *, dtype, shape):
    numbers = f"{ctx.xp}.arange({offset}, {offset} + {shape[0]}, dtype={ctx.bind(np.int64, 'i64')})"
    return numbers if np.dtype(dtype) == np.int64 else (
        f"{numbers}.astype({ctx.bind(np.dtype(dtype), 'dt')})")


def _local_rows(positions):
    """``positions`` (shape ``(rows, ..., k)``) whose first column holds its rows' numbers
    (in the whole program), with that column numbering this chunk's rows from 0."""
    xp = backend.array_module(positions)
    rows = positions.shape[0]
    numbers = xp.arange(rows, dtype=positions.dtype).reshape(
        (rows,) + (1,) * (positions.ndim - 1))
    return xp.concatenate([xp.broadcast_to(numbers, positions.shape[:-1] + (1,)),
                           positions[..., 1:]], axis=-1)


_ROW_INDEX = _CodePrimitive("row_index", _row_index_rule, multiple_results=False,
                            impl=_row_index_impl)
_LOCAL_ROWS = _CodePrimitive(
    "local_rows", lambda ctx, positions: f"{ctx.bind(_local_rows, 'local_rows')}({positions})",
    multiple_results=False, impl=_local_rows)


def _describe(header: str, eqns: list, inputs: list, outputs: list,
              offset: Var | None = None) -> str:
    """A region's text for ``as_text``: the header, its equations, its results
    (``offset``: the variable holding a chunk's first row's number)."""
    names: dict = {} if offset is None else {id(offset): "first_row"}

    def name(x):
        if type(x) is Literal and not np.ndim(x.val):
            return repr(x.val)
        if type(x) is Literal and id(x) not in names:
            return f"<a constant of shape {x.aval.shape}>"
        return names.setdefault(id(x), f"a{len(names) - (offset is not None)}")

    ins = [name(x) for x in inputs]
    lines = [f"{header}, inputs ({', '.join(ins)})"]
    for eqn in eqns:
        params = ", ".join(f"{k}={v!r}" for k, v in eqn.params.items())
        args = ", ".join(name(x) for x in eqn.invars)
        results = ", ".join(name(v) for v in eqn.outvars)
        lines.append(f"#   {results} = {eqn.primitive.name}({args}"
                     f"{', ' if params and args else ''}{params})")
    lines.append(f"#   -> ({', '.join(name(v) for v in outputs)})")
    return "\n".join(lines) + "\n"


class RowRegion:
    """Equations of a jitted program that keep chunks of rows apart, as one
    ``dask.array.blockwise`` call over the chunks of rows: calling it with the region's
    inputs gives a tuple of its results as lazy dask arrays.  ``eqns``: the equations;
    ``sized``: for each, the names of its parameters whose first entry is the row count;
    ``inputs``: the atoms they read from outside; ``outputs``: the results the rest of the
    program reads; ``combine``: for each output, None (rowed: one chunk of rows per task)
    or how the tasks' partials combine (``"sum"``, ``"max"``, ``"min"``; ``"first"``: each
    task gives all of it, the first is taken); ``n``: the row
    count; ``offset``: a variable (int64, 0-d) the equations read as the number of a
    chunk's first row, or None.  With no dask input at all the region is evaluated at
    once."""

    __slots__ = ("eqns", "sized", "inputs", "outputs", "combine", "n", "offset", "token",
                 "source", "_programs")

    def __init__(self, eqns: list, sized: list, inputs: list, outputs: list, combine: list,
                 n: int, token: str | None = None, offset: Var | None = None):
        import uuid
        self.eqns, self.sized, self.inputs, self.outputs = eqns, sized, inputs, outputs
        self.combine, self.n, self.offset = combine, n, offset
        self.token = token or uuid.uuid4().hex
        self._programs: dict = {}  # library -> the equations as a program of their own
        parts = sum(c is not None for c in combine)
        self.source = _describe(
            f"a row region: one blockwise task per chunk of the {n} rows"
            + (f", {parts} result{'s' * (parts > 1)} combined over the chunks" if parts
               else ""), eqns, inputs, outputs, offset)

    def __reduce__(self):  # to the workers of a cluster
        return (RowRegion, (self.eqns, self.sized, self.inputs, self.outputs, self.combine,
                            self.n, self.token, self.offset))

    def __dask_tokenize__(self):
        return ("functrans-row-region", self.token)

    def __repr__(self):
        return f"RowRegion({len(self.eqns)} equations, {self.n} rows)"

    def _rowed_inputs(self) -> list:
        return [rowed(x.aval, self.n) for x in self.inputs]

    def _parameters(self) -> list:
        """The variables the equations read from outside: the inputs, then the offset."""
        return list(self.inputs) + ([self.offset] if self.offset is not None else [])

    def _whole(self, args) -> tuple:
        """``args`` for the whole rows at once: their first row is row 0."""
        return tuple(args) + ((0,) if self.offset is not None else ())

    def _as_program(self, args) -> tuple:
        """The equations compiled as a program of their own, without row regions (one dask
        call per equation, elementwise regions as ``DaskRegion``s), called on ``args``:
        for inputs split along other axes than the rows, or with no rowed dask input."""
        library = backend.library_of(*args)
        program = self._programs.get(library)
        if program is None:
            jaxpr = Jaxpr([], self._parameters(), list(self.eqns), list(self.outputs))
            program = self._programs[library] = _generate(
                jaxpr, library, "row_region", False, _fusion_target(library), rows=False)
        return tuple(program(*self._whole(args)))

    def _retyped(self, rows: int) -> Jaxpr:
        """The region's equations as a jaxpr over chunks of ``rows`` rows: rowed variables
        with that many, the parameters that hold the row count set to it."""
        mapping: dict = {}

        def var(x):
            if type(x) is Literal:
                return x
            v = mapping.get(id(x))
            if v is None:
                aval = x.aval
                if rowed(aval, self.n):
                    aval = aval.update(shape=(rows,) + tuple(aval.shape[1:]))
                v = mapping[id(x)] = Var(aval)
            return v

        ins = [var(x) for x in self._parameters()]
        eqns = [JaxprEqn(e.primitive, [var(x) for x in e.invars],
                         _sized_params(e.params, sized, rows), [var(v) for v in e.outvars])
                for e, sized in zip(self.eqns, self.sized)]
        return Jaxpr([], ins, eqns, [var(v) for v in self.outputs])

    def run_chunk(self, blocks, rows: int) -> tuple:
        """The region on one chunk of ``rows`` rows of each rowed input (the others whole;
        then the chunk's first row's number if the region reads ``offset``), by its
        equations compiled for the chunks' library and that row count (once per
        process: the tasks of one region share it) or, with ``ROW_CHUNKS_COMPILED`` off,
        one impl call each."""
        if not ROW_CHUNKS_COMPILED:
            return self.evaluate(blocks, rows)
        arrays = [b for b in blocks if backend.is_array(b)]
        library = backend.library_of(*arrays)
        key = (self.token, rows, library)
        program = _chunk_programs.get(key)
        if program is None:
            with _chunk_lock:
                program = _chunk_programs.get(key)
                if program is None:
                    if len(_chunk_programs) >= 256:
                        _chunk_programs.clear()
                    program = _chunk_programs[key] = _generate(
                        self._retyped(rows), library, "row_chunk", False,
                        _fusion_target(library))
        return self._shaped(blocks, list(program(*blocks)), rows)

    def evaluate(self, args, rows: int | None = None) -> tuple:
        """The region's equations on ``args`` (whole arrays, lazy or not, for ``rows``
        None; else one chunk of ``rows`` rows of each rowed input, the others whole): its
        outputs, a chunk's partials (with a leading axis of one) for the combined ones.
        With ``rows``, ``args`` end with the chunk's first row's number if the region
        reads ``offset``."""
        env = {id(x): b for x, b in zip(self._parameters(),
                                        args if rows is not None else self._whole(args))}

        def read(x):
            return x.val if type(x) is Literal and id(x) not in env else env[id(x)]

        for eqn, sized in zip(self.eqns, self.sized):
            params = eqn.params if rows is None else _sized_params(eqn.params, sized, rows)
            impl = (impl_rules[eqn.primitive] if type(eqn.primitive) is Primitive
                    else eqn.primitive.impl)
            out = impl(*[read(x) for x in eqn.invars], **params)
            if eqn.primitive.multiple_results:
                env.update(zip(map(id, eqn.outvars), out))
            else:
                env[id(eqn.outvars[0])] = out
        return self._shaped(args, [env[id(v)] for v in self.outputs], rows)

    def _shaped(self, args, values: list, rows: int | None) -> tuple:
        """The outputs' ``values`` as arrays of their dtypes and shapes (for a chunk of
        ``rows`` rows, a combined output with a leading axis of one)."""
        arrays = [b for b in args if backend.is_array(b)]
        xp = backend.array_module(*arrays) if arrays else np
        results = []
        for v, combine, r in zip(self.outputs, self.combine, values):
            shape = tuple(v.aval.shape)
            if rows is not None and combine:  # a partial: a leading axis of one
                r = _output_value(xp, r, v.aval.dtype, shape).reshape((1,) + shape)
            else:
                r = _output_value(xp, r, v.aval.dtype,
                                  shape if rows is None else (rows,) + shape[1:])
            results.append(r)
        return tuple(results)

    def __call__(self, *args) -> tuple:
        if not any(backend.is_lazy(a) for a in args):
            return self.evaluate(args)
        import dask.array as da
        from dask.array.utils import meta_from_array
        lazy = next(a for a in args if backend.is_lazy(a))
        rowed_inputs = self._rowed_inputs()
        chunks, largest = None, -1
        for a, is_rowed in zip(args, rowed_inputs):
            if is_rowed and backend.is_lazy(a):
                backend.check_known_chunks(a, "jit")
                if any(len(c) > 1 for c in a.chunks[1:]):
                    return self._as_program(args)  # split along another axis as well
                if a.size > largest:  # the others are brought to the largest's rows
                    chunks, largest = a.chunks[0], a.size
        if chunks is None:  # no dask input is rowed: the rows are NumPy's or whole dask
            return self._as_program(args)  # arrays broadcast
        letters = (f"x{i}" for i in itertools.count())
        pairs: list = []
        for a, is_rowed in zip(args, rowed_inputs):
            if not backend.is_array(a) or not a.ndim:
                pairs += [a, () if backend.is_lazy(a) else None]
                continue
            if not backend.is_lazy(a):
                a = backend.asarray(a, like=lazy)
            if is_rowed:
                target = (chunks,) + tuple((d,) for d in a.shape[1:])
                if a.chunks != target:
                    a = a.rechunk(target)
                pairs += [a, ("rows",) + tuple(itertools.islice(letters, a.ndim - 1))]
            else:
                if any(len(c) > 1 for c in a.chunks):
                    a = a.rechunk(tuple((d,) for d in a.shape))
                pairs += [a, tuple(itertools.islice(letters, a.ndim))]
        if self.offset is not None:  # each task's first row's number: one per chunk
            pairs += [_first_rows(chunks), ("rows",)]
        single = len(self.outputs) == 1
        if not single:
            tuples = da.blockwise(functools.partial(_rows_blocks, self), ("rows",), *pairs,
                                  token="jit-rows", dtype=object, align_arrays=False,
                                  meta=np.empty((0,), dtype=object))
        results = []
        for j, (v, combine) in enumerate(zip(self.outputs, self.combine)):
            shape = tuple(v.aval.shape)
            dtype = np.dtype(v.aval.dtype)
            rest = shape if combine else shape[1:]
            axes = tuple(f"y{i}" for i in range(len(rest)))
            meta = meta_from_array(lazy._meta, ndim=len(axes) + 1, dtype=dtype)
            layout = dict(new_axes=dict(zip(axes, rest)), dtype=dtype, meta=meta,
                          adjust_chunks={"rows": 1} if combine else None)
            if single:  # the task's one result as it is
                picked = da.blockwise(functools.partial(_rows_block, self), ("rows",) + axes,
                                      *pairs, token="jit-rows", align_arrays=False,
                                      **layout)
            else:
                picked = da.blockwise(functools.partial(_region_pick, j=j), ("rows",) + axes,
                                      tuples, ("rows",), token="jit-rows-result", **layout)
            if combine == "sum":
                picked = picked.sum(axis=0, dtype=dtype)
            elif combine == "max":
                picked = picked.max(axis=0)
            elif combine == "min":
                picked = picked.min(axis=0)
            elif combine == "first":
                picked = picked[0]
            results.append(picked)
        return tuple(results)


def _first_rows(chunks: tuple):
    """For the region's ``blockwise`` call, beside its inputs: the number (an int) of each
    chunk's first row, one per chunk of rows.  Newer dask puts it into each
    task (``ArrayValuesDep``); before, a dask array of one block per chunk holds them
    (``blockwise`` pairs blocks by position, ``align_arrays=False``)."""
    import dask.array as da
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph
    starts = [int(s) for s in np.cumsum((0,) + tuple(chunks[:-1]))]
    try:
        from dask.layers import ArrayValuesDep
    except ImportError:
        pass
    else:
        return ArrayValuesDep((tuple(chunks),), np.asarray(starts, dtype=object))
    name = f"jit-rows-first-{tokenize(chunks)}"
    graph: dict = {(name, i): s for i, s in enumerate(starts)}
    return da.Array(HighLevelGraph.from_collections(name, graph, dependencies=()), name,
                    chunks=((1,) * len(chunks),), dtype=np.int64,
                    meta=np.empty((0,), np.int64))


#: (region token, row count, library) -> the region's equations compiled for such chunks
_chunk_programs: dict = {}
_chunk_lock = threading.Lock()


def _sized_params(params: dict, sized: tuple, rows: int) -> dict:
    """``params`` with the parameters named in ``sized`` holding ``rows`` rows."""
    if not sized:
        return params
    params = dict(params)
    for key in sized:
        params[key] = (rows,) + tuple(params[key][1:])
    return params


def _rows_blocks(region: RowRegion, *blocks) -> tuple:
    # The axes of an input that the result lacks come as nested lists of their one
    # block each (blockwise's concatenate=True would copy the block: a chunk per task).
    blocks = tuple(map(_only_block, blocks))
    rows = next(b.shape[0] for b, is_rowed in zip(blocks, region._rowed_inputs())
                if is_rowed and backend.is_array(b))
    if region.offset is not None:  # the last block: the chunk's first row's number
        blocks = blocks[:-1] + (int(blocks[-1]),)
    return region.run_chunk(blocks, rows)


def _only_block(block):
    while type(block) is list:
        assert len(block) == 1, len(block)
        (block,) = block
    return block


def _rows_block(region: RowRegion, *blocks):
    return _rows_blocks(region, *blocks)[0]


# ------------------------------------------------------------------------------------------
# Writing the code
# ------------------------------------------------------------------------------------------


class LoweringContext:
    """What a lowering rule may use: ``xp`` (the name of the array module in the generated
    code), ``bind(obj)`` (a name for any other object), and the operand and result types
    of the equation being lowered (``in_avals``, ``out_avals``; ``is_literal[i]``: operand
    ``i`` may not be an array — a constant such as a Python scalar, or a 0-d argument,
    which the caller may pass as a Python scalar — so it has no array methods)."""

    __slots__ = ("xp", "xp_module", "namespace", "_names", "in_avals", "out_avals",
                 "is_literal", "library")

    def __init__(self, namespace: dict, library):
        self.xp = "xp"
        self.xp_module = library.xp
        self.namespace = namespace
        self.library = library
        self._names: dict = {}
        self.in_avals: list = []
        self.out_avals: list = []
        self.is_literal: list = []  # per operand: a constant rather than a variable

    def constant(self, value, dtype) -> str:
        """Source for the scalar ``value`` as an operand of ``dtype`` arrays: a bound 0-d
        array of that dtype on NumPy (which then skips converting a Python scalar on every
        call), the literal itself elsewhere."""
        typed = (_typed_scalar(value, np.dtype(dtype))
                 if self.xp_module is np and type(value) in (int, float, complex) else None)
        return self.bind_scalar(typed) if typed is not None else repr(value)

    def bind_scalar(self, typed) -> str:
        """A readable global name for the 0-d array ``typed``: ``_f32_0p5`` is float32 0.5."""
        text = "".join(c if c.isalnum() else {".": "p", "-": "m"}.get(c, "_")
                       for c in repr(typed.item()))
        name = f"_{typed.dtype.char if typed.dtype.kind == 'c' else typed.dtype.name}_{text}"
        name = name.replace("float", "f").replace("uint", "u").replace("int", "i")
        if self.namespace.get(name, typed) is not typed:  # taken: the generic name
            return self.bind(typed, "s")
        self._names[id(typed)] = name
        self.namespace[name] = typed
        return name

    def bind(self, obj, hint: str = "k") -> str:
        """A global name in the generated code for ``obj`` (the same name for the same
        object)."""
        name = self._names.get(id(obj))
        if name is None:
            name = self._names[id(obj)] = f"_{hint}{len(self._names)}"
            self.namespace[name] = obj
        return name


def _scalar_source(val) -> str | None:
    """Source text for a Python scalar that evaluates to exactly it, or None."""
    if type(val) is bool or type(val) is int:
        return repr(val)
    if type(val) is float and np.isfinite(val):
        return repr(val)
    if type(val) is complex and np.isfinite(val.real) and np.isfinite(val.imag):
        return repr(val)
    return None


class CompiledFunction:
    """A jaxpr compiled to Python source: call it with the jaxpr's arguments; ``source``
    is the generated code; ``compile_seconds`` the time writing it took (wall clock),
    ``kernel_seconds`` the part spent on fused loops (numba compiling them, or loading
    them from the disk cache), ``kernels_loaded``/``kernels_compiled`` how many loops
    came from the disk cache and how many numba compiled."""

    __slots__ = ("fn", "source", "compile_seconds", "kernel_seconds", "kernels_loaded",
                 "kernels_compiled", "__weakref__")

    def __init__(self, fn: Callable, source: str):
        self.fn = fn
        self.source = source
        self.compile_seconds = self.kernel_seconds = 0.0
        self.kernels_loaded = self.kernels_compiled = 0

    def __call__(self, *args):
        return self.fn(*args)

    def __repr__(self):
        return f"CompiledFunction(\n{self.source})"


_counter = itertools.count()


def _generate(jaxpr: Jaxpr, library, name: str, owned_outputs: bool,
              fuse: str | None = None, rows: bool = True) -> CompiledFunction:
    start = time.perf_counter()
    invars, eqns, outs = optimize_jaxpr(jaxpr)
    kernels: list = []
    kernel_seconds = 0.0
    if fuse:
        before = dict(_kernel_counts)
        n = _row_count(invars) if fuse == "dask" and ROW_REGIONS and rows else None
        regions: list = []
        if n is not None:
            eqns, regions = _row_regions(eqns, outs, n)
        eqns, kernels = _fuse(eqns, outs, target=fuse)
        kernels = regions + kernels
        kernel_seconds = time.perf_counter() - start
    xp = library.xp
    namespace: dict = {"xp": xp}
    ctx = LoweringContext(namespace, library)
    names: dict = {}
    fresh_names = (f"v{i}" for i in itertools.count())

    def binder(v: Var) -> str:
        names[id(v)] = n = next(fresh_names)
        return n

    def atom(x, dtype=None) -> str:
        if type(x) is Var:
            return names[id(x)]
        val = x.val
        if dtype is not None and _is_weak_scalar(x):
            typed = _typed_scalar(val, dtype)
            if typed is not None:
                return ctx.bind_scalar(typed)
        text = _scalar_source(val) if x.aval.weak_type or type(val) is bool else None
        if text is not None:
            return text
        if isinstance(val, np.ndarray) and val.ndim:
            if xp is not np:  # folded constants are made on the host: move them once
                val = xp.asarray(val)
            return ctx.bind(val, "c")
        if isinstance(val, np.ndarray):
            val = val[()]
        return ctx.bind(val, "s")

    # Which variables may share memory with an argument or a constant, and which hold a
    # buffer this function allocated (the result of a fresh primitive).
    external = {id(v) for v in invars}
    fresh: set = set()
    last_use: dict = {}
    for i, eqn in enumerate(eqns):
        for x in eqn.invars:
            if type(x) is Var:
                last_use[id(x)] = i
    for x in outs:
        if type(x) is Var:
            last_use[id(x)] = len(eqns)
    buffer_end = _buffer_ends(eqns, last_use)

    args = [binder(v) for v in invars]
    arguments = {id(v) for v in invars}  # the caller's: deleting the name frees nothing
    scalar_arguments = {id(v) for v in invars if not v.aval.shape}  # maybe Python scalars
    lines = [f"def {name}({', '.join(args)}):"]
    for i, eqn in enumerate(eqns):
        prim = eqn.primitive
        dtype = _scalar_operand_dtype(eqn) if xp is np else None
        operands = [atom(x, dtype) for x in eqn.invars]
        lowering = _lowering(prim)
        operands = _cast_weak_operands(eqn, operands, ctx)
        lazy_impl = library.lazy and prim in LAZY_IMPL  # the core-axes table's way
        rule = None if lazy_impl else lowering.rule
        if rule is not None:
            ctx.in_avals = [x.aval for x in eqn.invars]
            ctx.out_avals = [v.aval for v in eqn.outvars]
            ctx.is_literal = [type(x) is Literal or id(x) in scalar_arguments
                              for x in eqn.invars]
            expr = rule(ctx, *operands, **eqn.params)
        else:
            impl = impl_rules[prim]
            fn = functools.partial(impl, **eqn.params) if eqn.params else impl
            expr = f"{ctx.bind(fn, prim.name.replace('-', '_') + '_')}({', '.join(operands)})"
        augmented = None
        if lowering.augmented and not lazy_impl:
            reuse = _reusable_operand(eqn, i, fresh, buffer_end, AUGMENTED_MIN_SIZE, arguments,
                                      xp is np)
            if reuse == 0 or reuse == 1 and lowering.commutative:
                augmented = (operands[reuse], lowering.augmented, operands[1 - reuse])
        if augmented is None and lowering.ufunc and not lazy_impl:
            reuse = _reusable_operand(eqn, i, fresh, buffer_end, IN_PLACE_MIN_SIZE, arguments,
                                      xp is np)
            if reuse is not None:
                expr = (f"{ctx.xp}.{lowering.ufunc}({', '.join(operands)}, "
                        f"out={operands[reuse]})")
        targets = [binder(v) for v in eqn.outvars]
        if lowering.fresh and not prim.multiple_results:
            fresh.add(id(eqn.outvars[0]))
        if prim.multiple_results:
            lhs = ", ".join(targets) + ("," if len(targets) == 1 else "")
            lhs = lhs or "_"
        else:
            lhs = targets[0]
        if augmented is not None:  # the dead operand's buffer, renamed, takes the result
            buffer, operator, other = augmented
            lines.append(f"    {lhs} = {buffer}")
            lines.append(f"    {lhs} {operator} {other}")
        else:
            lines.append(f"    {lhs} = {expr}")
        if not lowering.fresh and any(
                type(x) is Literal or id(x) in external for x in eqn.invars):
            external.update(id(v) for v in eqn.outvars)
        dead = [names[id(x)] for x in dict.fromkeys(
            x for x in eqn.invars if type(x) is Var)
            if last_use.get(id(x)) == i and id(x) not in arguments]
        dead += [names[id(v)] for v in eqn.outvars if id(v) not in last_use]
        if dead:
            lines.append(f"    del {', '.join(dead)}")
    results = []
    for x in outs:
        text = atom(x)
        if type(x) is Literal and isinstance(x.val, np.ndarray):
            text = f"{text}.copy()"
        elif type(x) is Var and id(x) in external and owned_outputs:
            text = f"{ctx.bind(_owned_copy, 'copy')}({text})"
        results.append(text)
    lines.append(f"    return ({', '.join(results)}{',' if len(results) == 1 else ''})")
    source = "\n".join(lines) + "\n"
    code = compile(source, f"<functrans.jit {name}>", "exec")
    exec(code, namespace)
    shown: set = set()
    for kernel_source in kernels:  # shown after the function, as the files numba compiles
        if id(kernel_source) in shown or (hasattr(kernel_source, "ufunc")
                                          and id(kernel_source.ufunc) in shown):
            continue  # one loop used twice (the same region twice) is shown once
        shown.add(id(getattr(kernel_source, "ufunc", kernel_source)))
        if isinstance(kernel_source, (DaskRegion, RowRegion)):
            bound = [k for k, v in namespace.items() if v is kernel_source]
            source += f"\n\n# {', '.join(bound)}: " + kernel_source.source
            continue
        if hasattr(kernel_source, "ufunc"):  # a UfuncKernel: its scalar program
            bound = [k for k, v in namespace.items() if v is kernel_source.ufunc]
            program = "\n".join("#   " + line for line in kernel_source.program.splitlines())
            kind = "generalised ufunc" if kernel_source.ufunc.signature else "ufunc"
            source += (f"\n\n# {', '.join(bound)}: a fused loop compiled by LLVM into a NumPy "
                       f"{kind} ({kernel_source.path}), for each element:\n" + program + "\n")
            continue
        if isinstance(kernel_source, CudaKernel):
            bound = [k for k, v in namespace.items() if v is kernel_source]
            source += (f"\n\n# {', '.join(bound)}: a fused CuPy kernel\n"
                       + kernel_source.source)
            continue
        kernel = _load_kernel(kernel_source)
        bound = [k for k, v in namespace.items() if v is kernel]
        source += (f"\n\n# {', '.join(bound)}: a fused loop compiled by numba "
                   f"({kernel.py_file})\n" + kernel_source)
    compiled = CompiledFunction(namespace[name], source)
    compiled.compile_seconds = time.perf_counter() - start
    compiled.kernel_seconds = kernel_seconds
    if fuse:
        compiled.kernels_loaded = _kernel_counts["loaded"] - before["loaded"]
        compiled.kernels_compiled = _kernel_counts["compiled"] - before["compiled"]
    return compiled


def _weak_as(x, dtype):
    """A weakly typed value in ``dtype``: Python scalars as they are (NumPy lets arrays
    decide their type), arrays and NumPy scalars converted."""
    return x if type(x) in (bool, int, float, complex) else x.astype(dtype)


def _cast_weak_operands(eqn: JaxprEqn, operands: list, ctx) -> list:
    """The operands of an equation, each weakly typed variable converted to the dtype the
    equation computes in (``core.weak_operand_dtypes``).  At run time such a variable
    holds an array or NumPy scalar of its own dtype (``i / 10`` of an integer argument:
    float64), which NumPy promotes as a strong type: ``m_f32 * (i / 10)`` would be float64
    where the jaxpr (and JAX, and eager functrans) says float32."""
    invars = eqn.invars
    if not any(type(x) is Var and x.aval.weak_type for x in invars):
        return operands
    dtypes = weak_operand_dtypes(eqn.primitive, [x.aval for x in invars])
    cast = []
    for x, text, dtype in zip(invars, operands, dtypes):
        if type(x) is Var and dtype is not None:
            text = f"{ctx.bind(_weak_as, 'weak_as')}({text}, {ctx.bind(np.dtype(dtype), 'dt')})"
        cast.append(text)
    return cast


def _scalar_operand_dtype(eqn: JaxprEqn):
    """For a NumPy-broadcasting equation mixing arrays and Python scalars: the dtype NumPy
    converts the scalars to (the weak scalars take the arrays' type), else None.  A scalar
    passed as a 0-d array of that dtype gives the same result and saves NumPy the
    conversion on every call (about 40% of a small multiply)."""
    if not _lowering(eqn.primitive).broadcasting:
        return None
    arrays, scalars = [], []
    for x in eqn.invars:
        if type(x) is Var:
            arrays.append(x.aval.dtype)
        elif _is_weak_scalar(x):
            scalars.append(x.val)
    if not arrays or not scalars:
        return None
    try:
        return np.result_type(*arrays, *scalars)
    except (TypeError, OverflowError, ValueError):
        return None


@functools.lru_cache(maxsize=1024)
def _typed_scalar_cached(val, text: str, dtype: np.dtype):
    try:
        typed = np.array(val, dtype=dtype)
    except (TypeError, OverflowError, ValueError):
        return None
    if dtype.kind in "biu" and typed.item() != val:
        return None  # an integer NumPy would refuse or wrap: keep NumPy's own handling
    typed.setflags(write=False)
    return typed


def _is_weak_scalar(x) -> bool:
    """``x`` is a literal Python ``int``, ``float`` or ``complex`` (weakly typed)."""
    return x.aval.weak_type and type(x.val) in (int, float, complex)


def _typed_scalar(val, dtype: np.dtype):
    """``val`` (a Python number) as a read-only 0-d array of ``dtype``, or None."""
    # keyed by repr too: 1 and 1.0 are equal keys, and so are 0.0 and -0.0
    return _typed_scalar_cached(val, repr(val), dtype)


def _buffer_ends(eqns: list, last_use: dict) -> dict:
    """id(var) of each buffer a fresh primitive allocates -> the last equation reading it
    or any view of it (a reshape, a transpose, a loop's result that may be its input)."""
    roots: dict = {}  # id(var) -> the ids of the fresh buffers it may share memory with
    for eqn in eqns:
        if _lowering(eqn.primitive).fresh and not eqn.primitive.multiple_results:
            roots[id(eqn.outvars[0])] = (id(eqn.outvars[0]),)
        else:
            shared = tuple({b for x in eqn.invars if type(x) is Var
                            for b in roots.get(id(x), ())})
            for v in eqn.outvars:
                roots[id(v)] = shared
    ends: dict = {}
    for var, buffers in roots.items():
        end = last_use.get(var, -1)
        for b in buffers:
            ends[b] = max(ends.get(b, -1), end)
    return ends


def _reusable_operand(eqn: JaxprEqn, i: int, fresh: set, buffer_end: dict, min_size: int,
                      arguments: set, overlap_safe: bool) -> int | None:
    """The index of an operand whose buffer the result of equation ``i`` (a ufunc) can be
    written into: allocated by this function, dead after this equation together with every
    view of it (``buffer_end``), of the result's shape and dtype, and large enough
    (``min_size`` elements) for the reuse to pay.
    ``overlap_safe``: the library computes ufuncs right when an input overlaps the output
    (NumPy does; CuPy's kernels do not, so there no other operand may be a view, which only
    operands that are neither fresh allocations nor arguments can be)."""
    out = eqn.outvars[0].aval
    if out.ndim == 0 or out.size < min_size:
        return None
    for j, x in enumerate(eqn.invars):
        if (type(x) is Var and id(x) in fresh and buffer_end.get(id(x)) == i
                and x.aval.shape == out.shape and x.aval.dtype == out.dtype):
            if not overlap_safe and any(
                    type(o) is Var and o is not x and id(o) not in fresh
                    and id(o) not in arguments for o in eqn.invars):
                return None  # another operand may be a view of this buffer (see below)
            return j
    return None


def _owned_copy(x):
    """A copy of an array the caller must own (Python and NumPy scalars are immutable)."""
    return x.copy() if backend.is_array(x) else x


_compiled: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def compile_jaxpr(closed: ClosedJaxpr, library=None, name: str = "jitted",
                  owned_outputs: bool = True) -> CompiledFunction:
    """``closed`` (without constants: closure-convert it first) compiled for the array
    ``library`` (``backend.library_of(...)``; NumPy's by default), memoised on the
    jaxpr's identity.  ``owned_outputs``: outputs that may share memory with an argument
    are copied (False for the bodies of loops, whose results feed the next iteration)."""
    if closed.consts:
        raise ValueError("compile_jaxpr: pass a closure-converted jaxpr (constants as "
                         "leading arguments)")
    library = library or backend.library_of()
    fuse = _fusion_target(library)
    key = (library, owned_outputs, fuse == "dask" and ROW_REGIONS,
           fuse and (fuse, FUSION_ALWAYS, FUSION_MIN_OPS, FUSION_MAX_OPS, _fusion_compilers(),
                     config.fusion_parallel and (PARALLEL_ELEMENTS, _threads())))
    with _lock:
        entry = _compiled.get(closed)
        if entry is not None and key in entry:
            return entry[key]
    identifier = "".join(c if c.isalnum() else "_" for c in name) or "jitted"
    if not identifier[0].isalpha():
        identifier = "f_" + identifier
    compiled = _generate(closed.jaxpr, library, identifier, owned_outputs, fuse)
    with _lock:
        _compiled.setdefault(closed, {})[key] = compiled
    return compiled
