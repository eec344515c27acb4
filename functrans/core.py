"""The core of functrans: abstract values, tracers, the interpreter stack and jaxprs.

Grammar of the IR (a jaxpr is a typed, first-order, single-assignment program)::

    jaxpr    ::= { lambda constvar* ; invar* . let eqn* in ( atom* ) }
    eqn      ::= outvar* = primitive[params] atom*
    atom     ::= var | literal
    var      ::= name:type            e.g.  b:f64[3,4]
    literal  ::= a Python or NumPy scalar

Every value flowing through a transformed function is either a concrete array (NumPy,
CuPy, or a Python scalar) or a ``Tracer`` owned by one ``Trace``.  Traces form a per-thread
stack; ``Primitive.bind`` hands an operation to the innermost (highest-level) trace among its
arguments, so nested transforms never confuse each other's tracers.
"""
from __future__ import annotations

import gc
import itertools
import math
import operator
import threading
import types
import weakref
from contextlib import contextmanager
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from functrans import backend, config
from functrans.array_types import (WEAK_ARRAY_TYPES, Array, strip_weak,
                                   user_result, weak_result)

__all__ = [
    "ShapedArray", "ShapeDtypeStruct", "Primitive", "Trace", "Tracer", "get_aval",
    "Var", "Literal", "JaxprEqn", "Jaxpr", "ClosedJaxpr", "check_jaxpr", "float0",
    "ConcretizationTypeError", "UnexpectedTracerError", "TracerArrayConversionError",
    "TracerBoolConversionError", "TracerIntegerConversionError",
    "NonConcreteBooleanIndexError", "JaxprTypeError",
    "EvalTrace", "eval_jaxpr", "primitive_by_name", "computing_internally", "RuleCounter",
    "handed_to_caller",
    "running_user_code", "has_effects", "eqn_has_effects", "binding_has_effects",
    # JAX's ``jax.core`` names that user code imports
    "AbstractValue", "Atom", "Value", "ParamDict", "ensure_compile_time_eval", "eval_context",
    "max_dim", "min_dim",
]

# ------------------------------------------------------------------------------------------
# Errors
# ------------------------------------------------------------------------------------------


class ConcretizationTypeError(TypeError):
    """Python needed a concrete value (for ``bool``, ``int``, an index) of an abstract tracer."""


class TracerBoolConversionError(ConcretizationTypeError):
    """``bool()`` of an abstract tracer (``if x > 0:`` on a traced ``x``)."""


class TracerIntegerConversionError(ConcretizationTypeError):
    """``int()`` of an abstract tracer, or one used as a Python index (``__index__``).
    (In JAX it is not a ``ConcretizationTypeError``; here it is one too, so that both
    ``except`` clauses catch it.)"""


class NonConcreteBooleanIndexError(IndexError, TypeError):
    """A traced boolean mask indexes an array (``x[x > 0]`` inside a transform): the
    result's shape would depend on the mask's values.  An ``IndexError`` as in JAX, and a
    ``TypeError`` as functrans raised before."""


class TracerArrayConversionError(TypeError):
    """A tracer was passed where a concrete NumPy array is required (e.g. ``np.asarray``)."""


class UnexpectedTracerError(RuntimeError, TypeError):
    """A tracer was used after the transform that created it had finished (a leak).  A
    ``TypeError`` as in JAX, and a ``RuntimeError`` as functrans raised before."""


# ------------------------------------------------------------------------------------------
# Dtypes and abstract values
# ------------------------------------------------------------------------------------------

#: The dtype of tangents and cotangents of integer and boolean values (as in JAX).
float0 = np.dtype([("float0", np.void, 0)])

_PY_SCALAR_DTYPES = {
    int: np.dtype(np.int64), float: np.dtype(np.float64), complex: np.dtype(np.complex128),
    bool: np.dtype(np.bool_),
}
python_scalar_types = frozenset(_PY_SCALAR_DTYPES)
# A weakly typed value stands for a Python scalar in NumPy's (NEP 50) promotion rules.
_WEAK_REPRESENTATIVE = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}
_SHORT_DTYPE = {"float": "f", "int": "i", "uint": "u", "complex": "c"}


def is_inexact(dtype) -> bool:
    # dtype.kind, not np.issubdtype: this is on every transform's path and 8x cheaper.
    return np.dtype(dtype).kind in "fc"


def short_dtype_name(dtype: np.dtype) -> str:
    if dtype == float0:
        return "float0"
    if dtype == np.bool_:
        return "bool"
    name = dtype.name
    for long, short in _SHORT_DTYPE.items():
        if name.startswith(long) and name[len(long):].isdigit():
            return short + name[len(long):]
    return name


class AbstractValue:
    """The type of abstract values, what a tracer knows of the value it stands for (JAX's
    ``core.AbstractValue``); functrans has one kind, :class:`ShapedArray`.

    >>> import numpy as np
    >>> isinstance(get_aval(np.ones(2)), AbstractValue)
    True
    """

    __slots__ = ()


class ShapedArray(AbstractValue):
    """The abstract value of an array: its shape, dtype and whether its type is weak.

    A weak type marks a value that came from a Python scalar: ``x_f32 * 2.0`` stays float32.
    """

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape, dtype, weak_type: bool = False):
        # Array shapes are already tuples of ints; only other sequences need converting.
        self.shape = shape if type(shape) is tuple else tuple(int(d) for d in shape)
        self.dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        self.weak_type = bool(weak_type)

    ndim = property(lambda self: len(self.shape))

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def update(self, shape=None, dtype=None, weak_type=None) -> ShapedArray:
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def strip_weak_type(self) -> ShapedArray:
        return self.update(weak_type=False) if self.weak_type else self

    def __eq__(self, other):
        return (type(other) is ShapedArray and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def str_short(self) -> str:
        return f"{short_dtype_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.shape}, {self.dtype}{weak})"


class ShapeDtypeStruct:
    """A shape and dtype standing in for an array, e.g. as an argument to ``make_jaxpr``."""

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape, dtype, weak_type: bool = False):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = weak_type

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def __repr__(self):
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name})"


_new_aval = object.__new__


def get_aval(x) -> ShapedArray:
    """The abstract value of a tracer, an array or a scalar."""
    t = type(x)
    if t is np.ndarray or t is Array:  # the hot path: shape is a tuple, dtype a np.dtype
        aval = _new_aval(ShapedArray)
        aval.shape, aval.dtype, aval.weak_type = x.shape, x.dtype, False
        return aval
    if isinstance(x, Tracer):
        return x.aval
    scalar = SCALAR_AVALS.get(t)
    if scalar is not None:  # abstract values are immutable: one per Python scalar type
        return scalar
    if t in WEAK_ARRAY_TYPES:
        return ShapedArray(x.shape, x.dtype, True)
    try:
        return ShapedArray(x.shape, x.dtype)
    except AttributeError:
        raise TypeError(f"Value {x!r} of type {t.__name__} is not a valid functrans array "
                        "type; pass NumPy or CuPy arrays, Python scalars, or pytrees of them."
                        ) from None


SCALAR_AVALS = {t: ShapedArray((), dtype, weak_type=t is not bool)
                 for t, dtype in _PY_SCALAR_DTYPES.items()}


def tangent_dtype(dtype: np.dtype) -> np.dtype:
    return dtype if np.dtype(dtype).kind in "fc" else float0


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    return aval if aval.dtype.kind in "fc" else ShapedArray(aval.shape, float0)


def result_type(*avals: ShapedArray) -> tuple[np.dtype, bool]:
    """NumPy's promotion of the given abstract values; weak only if all inputs are weak."""
    if avals and all(a.dtype == avals[0].dtype and a.weak_type == avals[0].weak_type
                     for a in avals):
        return avals[0].dtype, avals[0].weak_type
    strong = [a.dtype for a in avals if not a.weak_type]
    if not strong:
        return np.result_type(*[a.dtype for a in avals]), True
    weak = [_WEAK_REPRESENTATIVE[a.dtype.kind] for a in avals if a.weak_type]
    # Strong, also where JAX's lattice makes a weak value of a higher kind decide the type
    # (an int32 array and 1.0: JAX's is a weak float): functrans's arrays compute with
    # NumPy's own operators, which give a strong float there, and traced code must agree.
    return np.result_type(*strong, *weak), False


def is_python_scalar(x) -> bool:
    return type(x) in _PY_SCALAR_DTYPES


# ------------------------------------------------------------------------------------------
# Primitives and their rule tables
# ------------------------------------------------------------------------------------------

#: primitive -> impl(*args, **params) -> array (or list of arrays if multiple_results)
impl_rules: dict[Primitive, Callable] = {}
#: primitive -> abstract_eval(*avals, **params) -> ShapedArray (or list)
abstract_eval_rules: dict[Primitive, Callable] = {}


#: name -> the primitive of that name, so a pickled or copied jaxpr refers to the very
#: objects the rule tables are keyed by (the first primitive made under a name keeps it)
_primitives_by_name: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def primitive_by_name(name: str) -> Primitive:
    """The registered primitive called ``name`` (used when unpickling jaxprs)."""
    try:
        return _primitives_by_name[name]
    except KeyError:
        raise LookupError(f"No primitive named '{name}' exists in this process: import the "
                          "module that defines it before unpickling a jaxpr that uses it"
                          ) from None


class Primitive:
    """A named operation.  Its behaviour under each interpreter lives in rule tables; what
    the planner and the code generator need to know about it lives on it:

    ``origin``: whose code its rules run, ``"library"`` or ``"user"`` (the default, for
    primitives made outside functrans).  Reverse mode compiles and records only the
    library's primitives: a user's rules may print, count or draw random numbers, so they
    run as written on every call.  A library primitive whose rules call a user's functions
    (``custom_vjp``'s) is a ``"user"`` one.
    ``zero_derivative``: its derivative is zero wherever it is defined (``ad.defjvp_zero``),
    so differentiation treats its results as constants.
    ``lowering``: how ``jit``'s code generator writes it (``codegen.Lowering``), or None:
    the generated code then calls its impl rule.
    ``effectful``: it is bound for what it does (printing, calling back into Python), not
    only for its results, so no pass that removes or merges unneeded equations (dead-code
    elimination, common-subexpression elimination, constant folding) may touch it, nor an
    equation whose jaxpr parameters (a loop body, a branch, a called function) contain one
    (``eqn_has_effects``).
    """

    __slots__ = ("name", "multiple_results", "origin", "zero_derivative", "lowering",
                 "effectful", "__weakref__")

    def __init__(self, name: str, multiple_results: bool = False, *, origin: str = "user"):
        assert origin in ("library", "user"), origin
        self.name = name
        self.multiple_results = multiple_results
        self.origin = origin
        self.zero_derivative = False
        self.lowering: Any = None
        self.effectful = False
        _primitives_by_name.setdefault(name, self)

    def __repr__(self):
        return self.name

    def __reduce__(self):
        # By name: the unpickled (or deep-copied) primitive is the registered object.
        if _primitives_by_name.get(self.name) is not self:
            raise TypeError(f"Cannot pickle primitive '{self.name}': another primitive of the "
                            "same name was made first, so the name does not identify it. "
                            "Give each primitive a unique name.")
        return primitive_by_name, (self.name,)

    def bind(self, *args, **params):
        # find_top_trace inlined: this runs several times per operation under a transform.
        state = _state
        top = state.dynamic
        level = top.level
        for x in args:
            if isinstance(x, Tracer):
                trace = x._trace
                lvl = trace.level
                stack = state.stack
                if lvl >= len(stack) or stack[lvl] is not trace:
                    raise _leaked_tracer_error(x)
                if lvl > level:
                    top, level = trace, lvl
        return top.process_primitive(self, args, params)

    def abstract_eval(self, *avals, **params):
        try:
            rule = abstract_eval_rules[self]
        except KeyError:
            raise NotImplementedError(f"Abstract evaluation for '{self.name}' not implemented"
                                      ) from None
        return rule(*avals, **params)

    def impl(self, *args, **params):
        try:
            rule = impl_rules[self]
        except KeyError:
            raise NotImplementedError(f"Evaluation rule for '{self.name}' not implemented"
                                      ) from None
        return rule(*args, **params)


def abstract_eval_out_avals(prim: Primitive, avals, params) -> list[ShapedArray]:
    out = prim.abstract_eval(*avals, **params)
    return list(out) if prim.multiple_results else [out]


# ------------------------------------------------------------------------------------------
# Traces, tracers and the per-thread interpreter stack
# ------------------------------------------------------------------------------------------


class RuleCounter:
    """``internal`` > 0 while the library computes for itself: a transform's rules (each
    trace counts around the rules it runs) or its own top-level work
    (``computing_internally``).  One per thread, shared by its traces (a plain object:
    read and written around every rule)."""

    __slots__ = ("internal",)

    def __init__(self):
        self.internal = 0


class Trace:
    """One active transform.  ``level`` is its position in the thread's trace stack;
    ``counter``, its thread's ``RuleCounter``."""

    __slots__ = ("level", "counter", "__weakref__")
    #: the public transforms built on this trace, for error messages
    transforms = ""

    def __init__(self, level: int, counter: RuleCounter | None = None):
        self.level = level
        self.counter = counter if counter is not None else _state.counter

    def process_primitive(self, prim: Primitive, args: Sequence, params: dict):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}(level={self.level})"


class Tracer:
    """An abstract array value owned by a trace; behaves like an array in Python code."""

    __slots__ = ("_trace",)
    _trace: Trace  # set by each subclass's constructor
    __array_priority__ = 1000
    __array_ufunc__ = None  # make `ndarray + tracer` defer to `tracer.__radd__`

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def _check_alive(self) -> None:
        # A leaked tracer's value is that of a finished computation: refuse it, as `bind` does.
        trace, stack = self._trace, _state.stack
        if trace.level >= len(stack) or stack[trace.level] is not trace:
            raise _leaked_tracer_error(self)

    def _concrete(self, context: str):
        self._check_alive()
        return self.to_concrete_value(context)

    def device_witness(self):
        """A concrete array on this tracer's device when one is known (the primal under
        differentiation, the batch under vmap), else None: ``functrans.backend`` creates
        arrays ``like=`` a tracer on that array's device."""
        return None

    def to_concrete_value(self, context: str):
        """The concrete value behind this tracer, or a ConcretizationTypeError."""
        raise ConcretizationTypeError(
            f"Abstract tracer value encountered where a concrete value is expected ({context}):"
            f" {self.aval.str_short()} traced by {type(self._trace).__name__}.\n"
            "The value depends on a traced input, so Python control flow cannot branch on it "
            "here. Use functrans.lax.cond / lax.select (functrans.numpy.where) for branches, "
            "lax.while_loop / lax.fori_loop for loops, or mark the argument as static.")

    def __bool__(self):
        try:
            value = self._concrete("the truth value of a tracer, e.g. in `if x:`")
        except ConcretizationTypeError as error:
            if type(error) is ConcretizationTypeError:  # JAX's subclass, same message
                raise TracerBoolConversionError(*error.args) from None
            raise
        return bool(value)

    def __int__(self):
        return int(self._concrete_integer("int() of a tracer"))

    def _concrete_integer(self, context: str):
        try:
            return self._concrete(context)
        except ConcretizationTypeError as error:
            if type(error) is ConcretizationTypeError:  # JAX's subclass, same message
                raise TracerIntegerConversionError(*error.args) from None
            raise

    # float, complex, item and tolist refuse even a concrete primal (as JAX does): unlike
    # bool and int they are not piecewise constant, so the result would silently lose the
    # derivative (grad(lambda x: float(x) ** 2)(3.0) would be 0, not 6).
    def __float__(self):
        raise self._conversion_error("float()", "float(x)")

    def __complex__(self):
        raise self._conversion_error("complex()", "complex(x)")

    def item(self, *args):
        """Refused: a Python scalar cannot carry a derivative or a batch."""
        raise self._conversion_error(".item()", "x.item()")

    def tolist(self):
        """Refused: Python scalars cannot carry a derivative or a batch."""
        raise self._conversion_error(".tolist()", "x.tolist()")

    def _conversion_error(self, operation: str, call: str) -> ConcretizationTypeError:
        # An abstract or batched value gets the usual error (it names vmap's batch size).
        self._concrete(f"{operation} of a tracer")
        return ConcretizationTypeError(
            f"{operation} of a traced value ({self.aval.str_short()}, traced by "
            f"{type(self._trace).__name__}) would turn it into a Python scalar and silently "
            "drop its derivative or its batch dimension (this also happens in math.* "
            "functions and when storing into a NumPy array, e.g. `buf[0] = x`). Keep "
            "computing with the array: use functrans.numpy functions (fnp.exp, not math.exp) "
            "and lax.dynamic_update_slice instead of storing into NumPy buffers. If you "
            f"really want a constant, write {call.replace('x', 'lax.stop_gradient(x)', 1)} "
            "under grad/jvp, or convert outside the transform.")

    def __reduce__(self):
        raise TypeError(
            f"Cannot pickle a tracer ({self.aval.str_short()}, traced by "
            f"{type(self._trace).__name__}): it is an abstract value that exists only while "
            "its transform runs. Pickle the transform's concrete results instead (or a jaxpr "
            "made with functrans.make_jaxpr).")

    # A tracer is immutable, so a copy may share it (copy.deepcopy of a params dict).
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __index__(self):
        return int(self._concrete_integer("a tracer used as an index (__index__)"))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object (a 0-d tracer)")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d tracer")
        return (self[i] for i in range(self.shape[0]))

    def __array__(self, *args, **kwargs):
        self._check_alive()
        raise TracerArrayConversionError(
            f"A tracer ({self.aval.str_short()}) cannot be converted to a NumPy array (by "
            "np.asarray, np.array, or storing it into a NumPy array as in `buf[:] = x`): "
            "it is an abstract value inside a transform, and a NumPy array would silently drop "
            "its derivative or batch. Use functrans.numpy.asarray and the other "
            "functrans.numpy functions on traced values. A NumPy array indexed by a tracer "
            "(table[i]) ends here too, as NumPy's indexing offers no hook: write "
            "functrans.numpy.take(table, i, axis=0) or "
            "functrans.numpy.asarray(table).at[i].get() instead.")

    # Like arrays, tracers define elementwise __eq__ and are unhashable.
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self):
        return f"{type(self).__name__}<{self.aval.str_short()}>"


class EvalTrace(Trace):
    """The interpreter at the bottom of every stack: applies each primitive's impl rule to
    concrete values (NumPy, CuPy, Python scalars).  Its results are the user's array types
    (``Array``) when the user's code called the operation, plain backend arrays when the
    library computes for itself (``RuleCounter``)."""

    __slots__ = ()

    def process_primitive(self, prim: Primitive, args: Sequence, params: dict):
        try:
            impl = impl_rules[prim]
        except KeyError:
            raise NotImplementedError(f"Evaluation rule for '{prim.name}' not implemented"
                                      ) from None
        plain = scalars = False
        for x in args:
            t = type(x)
            if t is _ndarray:  # the common case first
                continue
            if t is Array:
                plain = True
            elif t is float or t is int or t is complex:
                scalars = True
            elif t in WEAK_ARRAY_TYPES:
                return evaluate_weak(prim, impl, args, params, not self.counter.internal)
        if scalars:  # is NumPy's promotion of the Python scalars JAX's? (inlined
            for x in args:  # numpy_promotes_weakly)
                t = type(x)
                if t is _ndarray or t is Array:
                    kind = x.dtype.kind
                    if kind in "fc":
                        break  # an inexact array decides the type (x * 2.0: the common case)
                    if kind in "iu":
                        lowering = prim.lowering
                        if lowering is not None and lowering.broadcasting:
                            break  # and an integer one of a broadcasting primitive (i + 1)
                        return evaluate_weak(prim, impl, args, params,
                                             not self.counter.internal)
            else:
                return evaluate_weak(prim, impl, args, params, not self.counter.internal)
        if plain:  # impls compute on plain ndarrays: NumPy is slower on subclasses
            args = [a.view(np.ndarray) if type(a) is Array else a for a in args]
        try:
            out = impl(*args, **params)
        except Exception as error:
            explain_failure(prim, args, params, error)
            raise
        # The user's own call, under a transform or not: results are Arrays
        # (docs/array_api.md); what the library computes for itself (a transform's rules,
        # its own top-level work) is plain.  A fresh result is memory nobody else holds:
        # the read-only flag is skipped here (4% of a small operation); Array refuses
        # writes.
        if self.counter.internal:
            return out
        if type(out) is np.ndarray:  # the common case first
            return out.view(Array)
        return user_result(out)


_ndarray = np.ndarray


def numpy_promotes_weakly(prim: Primitive, args: Sequence) -> bool:
    """Whether NumPy's own promotion of ``args`` (Python scalars among them, no weakly
    typed arrays) gives the type abstract evaluation does: a NumPy array is among them
    whose type the result takes, an inexact one (``x * 2.0``, the common case) or, for a
    broadcasting primitive, an integer one (``i + 1``)."""
    for x in args:
        t = type(x)
        if t is _ndarray or t is Array:
            kind = x.dtype.kind
            if kind == "f" or kind == "c":
                return True
            if kind == "i" or kind == "u":
                return _broadcasting(prim)
    return False


def evaluate_weak(prim: Primitive, impl: Callable, args: Sequence, params: dict,
                  user_call: bool):
    """``impl(*args, **params)`` where some of ``args`` are weakly typed (Python scalars,
    ``WeakArray``), with the types abstract evaluation gives, as under ``jit`` and in JAX.

    NumPy promotes Python scalars weakly itself, so a Python scalar beside an inexact array
    needs nothing (``EvalTrace`` does not call this then).  A weakly typed *array* is
    promoted by NumPy as a strong one (``x_f32 * where(mask, 1.0, 0.0)`` would be
    float64): it is converted first (``weak_operand_dtypes``), and a result of another
    dtype than the evaluated one is converted to it.  A result is weakly typed (``weak_result``) where the evaluation says
    so: an operation of weakly typed values alone, a ``select`` of them by a mask, a
    gather from one.  The user's own calls of Python scalars alone keep giving Python
    scalars where they give a NumPy scalar (``sin(2.0)``)."""
    weak_arrays = arrays = strong = numeric = False
    for x in args:
        t = type(x)
        if t in WEAK_ARRAY_TYPES:
            weak_arrays = True
        elif t not in _PY_SCALAR_DTYPES:
            arrays = True
            kind = x.dtype.kind
            if kind in "fc" or backend.is_lazy(x):  # (dask arrays cannot carry the mark)
                strong = True
            elif kind != "b":
                numeric = True
    if not weak_arrays and (strong or numeric and _broadcasting(prim)):
        # A strong array the result takes its type from: NumPy's promotion is JAX's.
        return _evaluate(prim, impl, [a.view(np.ndarray) if type(a) is Array else a
                                      for a in args], params, user_call)
    if not arrays and not weak_arrays:  # Python scalars alone
        out = _evaluate(prim, impl, args, params, False)
        if prim.multiple_results:
            return user_result(out) if user_call else out
        if type(out) in _WEAK_RESULT_TYPES:  # a Python scalar, as traced: `sin(2.0) * x_f32`
            return out.item()                 # stays float32
        if not user_call:
            return out
        if type(out) is not np.ndarray or out.dtype == np.bool_:
            return user_result(out)
        avals = [get_aval(x) for x in args]
        return weak_result(out) if prim.abstract_eval(*avals, **params).weak_type else (
            user_result(out))
    avals = [get_aval(x) for x in args]
    out_avals = abstract_eval_out_avals(prim, avals, params)
    if weak_arrays:
        args = _weak_operands(prim, args, avals)
    else:
        args = [a.view(np.ndarray) if type(a) is Array else a for a in args]
    out = _evaluate(prim, impl, args, params, False)
    outs = [_as_evaluated(o, a, weak_arrays, user_call)
            for o, a in zip(out if prim.multiple_results else [out], out_avals)]
    return outs if prim.multiple_results else outs[0]


def _broadcasting(prim: Primitive) -> bool:
    """Whether ``prim``'s operands broadcast together (each takes part in its type)."""
    lowering = prim.lowering
    return lowering is not None and lowering.broadcasting


def _evaluate(prim: Primitive, impl: Callable, args: Sequence, params: dict, user_call: bool):
    """``impl(*args, **params)``, handed out as ``EvalTrace`` hands results out."""
    try:
        out = impl(*args, **params)
    except Exception as error:
        explain_failure(prim, args, params, error)
        raise
    if not user_call:
        return out
    return out.view(Array) if type(out) is np.ndarray else user_result(out)


#: primitive -> the positions of its operands whose dtype takes no part in its result's
#: (``ldexp``'s integer exponent): a weakly typed one keeps its own dtype
own_typed_operands: dict[Primitive, frozenset] = {}


def weak_operand_dtypes(prim: Primitive, avals: Sequence[ShapedArray]) -> list:
    """For each operand of ``prim``: the dtype a weakly typed one is converted to before
    the primitive computes (None: as it is).  At run time a weakly typed value is an array
    of its own dtype (``where(mask, 1.0, 0.0)``: float64), which NumPy promotes as a
    strong type; converted, it computes in the dtype abstract evaluation gives (JAX's).

    Operands that broadcast together (elementwise primitives, ``select``) convert to their
    common type, a predicate staying boolean; for other primitives, weakly typed inexact
    operands convert to the common type of the inexact ones (indices stay integers)."""
    if _broadcasting(prim):
        own = own_typed_operands.get(prim, ())
        typed = [a for i, a in enumerate(avals) if a.dtype != np.bool_ and i not in own]
        target = result_type(*(typed or avals))[0]
        return [target if a.weak_type and a.dtype != target and a.dtype != np.bool_
                and i not in own else None for i, a in enumerate(avals)]
    inexact = [a for a in avals if a.dtype.kind in "fc"]
    if all(a.weak_type for a in inexact):
        return [None] * len(avals)
    target = result_type(*inexact)[0]
    return [target if a.weak_type and a.dtype.kind in "fc" and a.dtype != target else None
            for a in avals]


def _weak_operands(prim: Primitive, args: Sequence, avals: list) -> list:
    """``args`` as plain arrays, the weakly typed ones converted as
    ``weak_operand_dtypes`` says."""
    plain = []
    for x, dtype in zip(args, weak_operand_dtypes(prim, avals)):
        t = type(x)
        if t in WEAK_ARRAY_TYPES:
            x = strip_weak(x)
            if dtype is not None:
                x = x.astype(dtype)
        elif t is Array:
            x = x.view(np.ndarray)
        plain.append(x)
    return plain


def _as_evaluated(out, aval: ShapedArray, convert: bool, user_call: bool):
    """A result of ``evaluate_weak`` in the evaluated dtype (``convert``), weakly typed if
    the evaluation says so, else as ``EvalTrace`` hands results out."""
    dtype = getattr(out, "dtype", None)
    if convert and dtype is not None and dtype != aval.dtype and backend.is_array(out):
        out = out.astype(aval.dtype)
    if aval.weak_type and dtype is not None:
        return weak_result(out)
    return user_result(out) if user_call else out


# NumPy scalar types a Python-scalar computation can produce; other dtypes were asked for.
# Not bool: comparisons give strong bools (as in JAX), and `~` of a Python bool is integer
# inversion (~True == -2, truthy), so `~isnan(x)` would be wrong for a Python float x.
_WEAK_RESULT_TYPES = frozenset({np.float64, np.int64, np.complex128})


def explain_failure(prim: Primitive, args, params, error: Exception) -> None:
    """If the impl failed on invalid input, raise the abstract evaluation's clearer error
    (the one tracing gives) instead of the array library's; the backend's errors about
    the arrays themselves (mixed or lazy libraries) get the operation's name."""
    if isinstance(error, backend.ArrayLibraryError):
        if not str(error).startswith(prim.name):
            raise type(error)(f"{prim.name}: {error}") from None
        return
    try:
        prim.abstract_eval(*[get_aval(x) for x in args], **params)
    except (TypeError, ValueError) as clearer:
        raise clearer from error


class _TraceState(threading.local):
    """The interpreter stack of one thread.  Level 0 is plain evaluation."""

    def __init__(self):
        self.counter = RuleCounter()
        base = self.base = EvalTrace(0, self.counter)
        self.stack: list[Trace] = [base]
        self.dynamic: Trace = base  # the trace that takes operations on constants


_state = _TraceState()


def handed_to_caller(out):
    """The result ``out`` of a primitive a transform's trace processed, as user code gets
    it: values that left the transform (constants: a zero tangent, an unbatched value) in
    the user's array types, as ``EvalTrace`` gives them; tracers as they are.  A trace
    calls this when no rule is running (its ``counter.internal`` is 0)."""
    if type(out) is list:
        return [o if isinstance(o, Tracer) else user_result(o) for o in out]
    return out if isinstance(out, Tracer) else user_result(out)


class computing_internally:
    """Inside the block, operations outside transforms are the library's own work, whose
    results are not handed to the user: ``EvalTrace`` returns plain backend arrays (the
    public transform applies the result types once, at its return)."""

    __slots__ = ()

    def __enter__(self) -> None:
        _state.counter.internal += 1

    def __exit__(self, exc_type, exc, traceback) -> None:
        _state.counter.internal -= 1


class running_user_code:
    """Inside the block the user's own code runs on the library's behalf (a ``custom_vjp``
    backward function called by a pullback): operations outside transforms hand out the
    user's array types again, as in the user's own calls."""

    __slots__ = ("saved",)

    def __enter__(self) -> None:
        counter = _state.counter
        self.saved, counter.internal = counter.internal, 0

    def __exit__(self, exc_type, exc, traceback) -> None:
        _state.counter.internal = self.saved


def trace_stack() -> list[Trace]:
    return _state.stack


def dynamic_trace() -> Trace:
    """The trace that takes operations on constants: an ``EvalTrace`` unless a staging
    transform (``make_jaxpr``) records them."""
    return _state.dynamic


def new_trace(trace_type: type, *args, dynamic: bool = False, **kwargs) -> _TraceScope:
    """Push a new trace on this thread's stack for the duration of a transform (a context
    manager giving the trace)."""
    return _TraceScope(trace_type, args, kwargs, dynamic)


class _TraceScope:
    """The context manager of ``new_trace``: a class, not a generator, since every
    transformed call enters one or more (it is part of the fixed cost of ``grad``)."""

    __slots__ = ("trace_type", "args", "kwargs", "dynamic", "trace", "previous_dynamic")

    trace: Any  # the trace while the scope is entered, else None
    previous_dynamic: Any

    def __init__(self, trace_type: type, args: tuple, kwargs: dict, dynamic: bool):
        self.trace_type, self.args, self.kwargs, self.dynamic = trace_type, args, kwargs, dynamic

    def __enter__(self) -> Any:  # the trace, of the type asked for
        state = _state
        trace = self.trace = self.trace_type(len(state.stack), *self.args, **self.kwargs)
        state.stack.append(trace)
        self.previous_dynamic = state.dynamic
        if self.dynamic:
            state.dynamic = trace
        return trace

    def __exit__(self, exc_type, exc, traceback) -> None:
        trace, self.trace = self.trace, None
        state = _state
        # Restore the stack even if the transform raised, so the next call starts clean.
        del state.stack[trace.level:]
        state.dynamic, self.previous_dynamic = self.previous_dynamic, None
        if exc_type is None and config.check_tracer_leaks:  # a traceback holds tracers
            # The transform's own code has dropped its references (e.g. `del trace` in
            # ad.jvp_flat), so the trace normally dies here; if not, something may hold
            # tracers.
            trace_ref = weakref.ref(trace)
            del trace
            if trace_ref() is not None:
                check_no_leaks(trace_ref())  # type: ignore[arg-type]  # alive: checked above


@contextmanager
def evaluating_with(trace: Trace | None):
    """Evaluate operations on constants with ``trace``, a level-0 stand-in for the base
    trace, inside the block.  Nothing changes when ``trace`` is None or a staging trace is
    dynamic (``make_jaxpr``): operations on constants are then recorded, not evaluated."""
    state = _state
    previous = state.dynamic
    if trace is None or previous is not state.stack[0]:
        yield
        return
    state.dynamic = trace
    try:
        yield
    finally:
        state.dynamic = previous


def ensure_compile_time_eval():
    """A context in which operations on values that depend on nothing traced are computed
    at once, even while ``jit`` or ``make_jaxpr`` traces (operations on tracers are still
    staged): for constants the trace should hold as values.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> def f(x):
    ...     with ft.ensure_compile_time_eval():
    ...         table = fnp.cos(np.arange(3.0))  # computed now, a constant of the jaxpr
    ...     return x * table
    ...
    >>> [e.primitive.name for e in ft.make_jaxpr(f)(np.ones(3)).jaxpr.eqns]
    ['mul']
    """
    return evaluating_constants()


def eval_context():
    """JAX's ``core.eval_context``: operations on concrete values inside the block run at
    once, as :func:`ensure_compile_time_eval` (the same context in functrans).  Where JAX
    raises on a tracer of an enclosing transform used inside the block, functrans hands
    the operation to that transform.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> from functrans import core
    >>> def f(x):
    ...     with core.eval_context():
    ...         n = fnp.sum(np.arange(4))
    ...     return x * n
    ...
    >>> ft.make_jaxpr(f)(1.0).jaxpr.eqns[0].primitive.name
    'mul'
    """
    return evaluating_constants()


def max_dim(d1: int, d2: int) -> int:
    """The larger of two dimensions (JAX's ``core.max_dim``, written for symbolic shapes;
    functrans's dimensions are always integers).

    >>> max_dim(3, 5)
    5
    """
    return max(operator.index(d1), operator.index(d2))


def min_dim(d1: int, d2: int) -> int:
    """The smaller of two dimensions (JAX's ``core.min_dim``; see :func:`max_dim`).

    >>> min_dim(3, 5)
    3
    """
    return min(operator.index(d1), operator.index(d2))


@contextmanager
def evaluating_constants():
    """Evaluate operations on constants now inside the block, even under a staging trace
    that records them (``jit``, ``make_jaxpr``): for values that depend on nothing traced,
    such as positions computed from concrete indices.  Operations on tracers still go to
    their traces."""
    state = _state
    previous = state.dynamic
    state.dynamic = state.stack[0]
    try:
        yield
    finally:
        state.dynamic = previous


def _leaked_tracer_error(tracer: Tracer) -> UnexpectedTracerError:
    return UnexpectedTracerError(
        f"Encountered a tracer ({tracer.aval.str_short()}, from {tracer._trace!r}) outside the "
        "transform that created it. It leaked, e.g. by being stored in a global, a closure "
        "or an attribute during a transformed call, and is now used after that transform "
        "ended (or in another thread). Return values from the transformed function instead "
        "of storing them; `with functrans.checking_leaks():` reports where a leak happens.")


def check_no_leaks(trace: Trace) -> None:
    """Raise UnexpectedTracerError if a tracer of ``trace`` (which has ended) is still
    referenced.  Used by the leak checker (``functrans.checking_leaks``)."""
    gc.collect()  # tracers kept alive only by garbage cycles are not leaks
    leaked = [r for r in gc.get_referrers(trace) if isinstance(r, Tracer) and r._trace is trace]
    if not leaked:
        return
    holders = sorted({type(h).__name__ for x in leaked for h in gc.get_referrers(x)
                      if h is not leaked and not isinstance(h, types.FrameType)})
    kinds = ", ".join(sorted({repr(x) for x in leaked}))
    transforms = f" (used by {type(trace).transforms})" if type(trace).transforms else ""
    raise UnexpectedTracerError(
        f"Leaked {len(leaked)} tracer{'s' if len(leaked) > 1 else ''} of {type(trace).__name__}"
        f"{transforms}: {kinds}, still referenced after the transform ended"
        + (f", held by: {', '.join(holders)}" if holders else "") + ". A transformed "
        "function stored a traced value outside itself (a global, a closure, an attribute, "
        "a list); return it instead.")


def find_top_trace(args) -> Trace:
    state = _state
    top = state.dynamic
    level = top.level
    stack = state.stack
    for x in args:
        if isinstance(x, Tracer):
            trace = x._trace
            lvl = trace.level
            if lvl >= len(stack) or stack[lvl] is not trace:
                raise _leaked_tracer_error(x)
            if lvl > level:
                top, level = trace, lvl
    return top


# ------------------------------------------------------------------------------------------
# Jaxprs
# ------------------------------------------------------------------------------------------


class Var:
    """A jaxpr variable; identity is the object itself.  Names are given when printed."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self):
        return f"Var({self.aval.str_short()})"


class Literal:
    """A scalar constant written inline in a jaxpr."""

    __slots__ = ("val", "aval")

    def __init__(self, val, aval: ShapedArray):
        self.val = val
        self.aval = aval

    def __repr__(self):
        return f"Literal({self.val!r})"


#: a jaxpr equation's operand: a variable or an inline literal
Atom = Var | Literal
#: a concrete value (an array or a Python scalar)
Value = Any
#: an equation's parameters
ParamDict = dict[str, Any]


class JaxprEqn:
    __slots__ = ("primitive", "invars", "params", "outvars")

    def __init__(self, primitive: Primitive, invars: list, params: dict, outvars: list[Var]):
        self.primitive = primitive
        self.invars = invars
        self.params = params
        self.outvars = outvars


class DebugInfo(NamedTuple):
    """Where a jaxpr came from: the transform that traced it (``traced_for``), the traced
    function (``func_src_info``, e.g. ``"loss at model.py:12"``), one name per input
    (``arg_names``: the parameter's name and the leaf's pytree path, ``"params['w']"``) and
    one per output (``result_paths``: ``"result"``, ``"result[0]"``, ``"result['loss']"``).
    """

    traced_for: str
    func_src_info: str | None
    arg_names: tuple[str, ...]
    result_paths: tuple[str, ...] | None = None


class Jaxpr:
    """A program in functrans's intermediate language: equations applying primitives to
    variables, from input variables (and constant variables) to outputs. Jaxprs are made
    by tracing (``make_jaxpr``, ``jit``); this constructor is for transforms of jaxprs."""

    __slots__ = ("constvars", "invars", "eqns", "outvars", "debug_info", "__weakref__")

    def __init__(self, constvars, invars, eqns, outvars, debug_info: DebugInfo | None = None):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.eqns = list(eqns)
        self.outvars = list(outvars)
        assert debug_info is None or len(debug_info.arg_names) == len(self.invars), \
            "a jaxpr's debug info names each input once"
        self.debug_info = debug_info

    in_avals = property(lambda self: [v.aval for v in self.invars])
    out_avals = property(lambda self: [v.aval for v in self.outvars])

    def pretty_print(self, *, arg_names: bool = False) -> str:
        """The jaxpr as text; with ``arg_names=True`` (and debug info, which ``make_jaxpr``
        records) a comment line above it per input names the input by its argument's pytree path
        (``# a = params['w']``)."""
        text = pp_jaxpr(self)
        if not arg_names or self.debug_info is None:
            return text
        # pp_jaxpr names the constvars first, then the inputs, from the same sequence.
        binders = itertools.islice(_var_names(), len(self.constvars), None)
        legend = "".join(f"# {b} = {n}\n" for b, n in zip(binders, self.debug_info.arg_names))
        return legend + text

    def __str__(self):
        return pp_jaxpr(self)

    __repr__ = __str__


_effects_of: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _param_has_effects(value) -> bool:
    if isinstance(value, (Jaxpr, ClosedJaxpr)):
        return has_effects(value)
    if isinstance(value, (tuple, list)):
        for v in value:
            if _param_has_effects(v):
                return True
    return False


def eqn_has_effects(eqn: JaxprEqn) -> bool:
    """Whether running ``eqn`` does something besides computing its results: its primitive
    is ``effectful``, or a jaxpr among its parameters has such an equation."""
    return binding_has_effects(eqn.primitive, eqn.params)


def binding_has_effects(prim: Primitive, params: dict) -> bool:
    """Whether binding ``prim`` with ``params`` has effects (``eqn_has_effects``)."""
    if prim.effectful:
        return True
    for value in params.values():
        if type(value) not in _PLAIN_PARAMS and _param_has_effects(value):
            return True
    return False


#: parameter types that hold no jaxpr (the common ones, tested before the walk)
_PLAIN_PARAMS = frozenset({int, float, bool, str, type(None)})


def has_effects(jaxpr) -> bool:
    """Whether a ``Jaxpr`` or ``ClosedJaxpr`` has an equation with effects
    (``eqn_has_effects``); remembered per jaxpr."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    found = _effects_of.get(jaxpr)
    if found is None:
        found = _effects_of[jaxpr] = any(eqn_has_effects(e) for e in jaxpr.eqns)
    return found


class ClosedJaxpr:
    """A jaxpr together with the values of its constvars."""

    __slots__ = ("jaxpr", "consts", "__weakref__")

    def __init__(self, jaxpr: Jaxpr, consts: Sequence):
        if len(jaxpr.constvars) != len(consts):
            raise TypeError(f"ClosedJaxpr: the jaxpr has {len(jaxpr.constvars)} constvars but "
                            f"{len(consts)} constants were given")
        self.jaxpr = jaxpr
        self.consts = list(consts)

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)
    debug_info = property(lambda self: self.jaxpr.debug_info)

    def pretty_print(self, *, arg_names: bool = False) -> str:
        """The jaxpr as text (see :meth:`Jaxpr.pretty_print`)."""
        return self.jaxpr.pretty_print(arg_names=arg_names)

    def __str__(self):
        return pp_jaxpr(self.jaxpr)

    __repr__ = __str__


def _var_names():
    letters = "abcdefghijklmnopqrstuvwxyz"
    for n in itertools.count(1):
        for chars in itertools.product(letters, repeat=n):
            yield "".join(chars)


def _is_jaxpr(x) -> bool:
    return isinstance(x, (Jaxpr, ClosedJaxpr))


def _pp_param(value, indent: int) -> str:
    if isinstance(value, np.dtype):
        return short_dtype_name(value)
    if _is_jaxpr(value):
        return pp_jaxpr(value.jaxpr if isinstance(value, ClosedJaxpr) else value, indent)
    if isinstance(value, tuple) and value and all(_is_jaxpr(v) for v in value):
        pad = " " * indent
        inner = "\n".join(pad + "  " + _pp_param(v, indent + 2) for v in value)
        return f"(\n{inner}\n{pad})"
    return repr(value)


def pp_jaxpr(jaxpr: Jaxpr, indent: int = 0) -> str:
    """The jaxpr as text: typed binders, one equation per line; nested jaxprs indented."""
    names: dict[Var, str] = {}
    fresh = _var_names()
    pad = " " * indent

    def binder(v: Var) -> str:
        assert v not in names, "jaxpr variable bound twice"
        names[v] = next(fresh)
        return f"{names[v]}:{v.aval.str_short()}"

    def atom(x) -> str:
        if isinstance(x, Literal):
            return repr(x.val.item() if isinstance(x.val, (np.ndarray, np.generic)) else x.val)
        return names.get(x, "?")

    consts = " ".join(binder(v) for v in jaxpr.constvars)
    ins = " ".join(binder(v) for v in jaxpr.invars)
    lines = []
    for eqn in jaxpr.eqns:
        args = " ".join(atom(x) for x in eqn.invars)
        nested = any(_is_jaxpr(v) or (isinstance(v, tuple) and v and all(map(_is_jaxpr, v)))
                     for v in eqn.params.values())
        if nested:
            inner = pad + "      "
            params = ("[\n" + "\n".join(f"{inner}{k}={_pp_param(v, indent + 6)}"
                                          for k, v in eqn.params.items()) + f"\n{pad}    ]")
        else:
            params = ", ".join(f"{k}={_pp_param(v, 0)}" for k, v in eqn.params.items())
            params = f"[{params}]" if params else ""
        rhs = eqn.primitive.name + params + (f" {args}" if args else "")
        outs = " ".join(binder(v) for v in eqn.outvars)
        lines.append(f"{pad}    {outs} = {rhs}")
    outs = ", ".join(atom(x) for x in jaxpr.outvars) + ("," if len(jaxpr.outvars) == 1 else "")
    head = f"{{ lambda {consts}; {ins}. let" if consts else f"{{ lambda ; {ins}. let"
    return "\n".join([head, *lines, f"{pad}  in ({outs}) }}"])


class JaxprTypeError(TypeError):
    """A jaxpr failed the type checker."""


def check_jaxpr(jaxpr: Jaxpr) -> None:
    """Type-check a jaxpr: single assignment, use after definition, and every equation's
    output types equal to its primitive's abstract evaluation of its input types (nested
    jaxprs of control flow included).  Returns None, or raises ``JaxprTypeError``.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> closed = ft.make_jaxpr(lambda x: fnp.sin(x) * 2.0)(1.0)
    >>> ft.check_jaxpr(closed.jaxpr)
    """
    env: set[Var] = set()

    def bind(v: Var):
        if not isinstance(v, Var):
            raise JaxprTypeError(f"binder {v!r} is not a Var")
        if v in env:
            raise JaxprTypeError(f"variable {v!r} is bound twice")
        env.add(v)

    def read(x) -> ShapedArray:
        if isinstance(x, Literal):
            return x.aval
        if x not in env:
            raise JaxprTypeError(f"variable {x!r} is used before it is defined")
        return x.aval

    for v in jaxpr.constvars:
        bind(v)
    for v in jaxpr.invars:
        bind(v)
    for eqn in jaxpr.eqns:
        in_avals = [read(x) for x in eqn.invars]
        for value in eqn.params.values():  # the jaxprs of higher-order primitives
            for sub in (value if isinstance(value, tuple) else (value,)):
                if _is_jaxpr(sub):
                    check_jaxpr(sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub)
        out_avals = abstract_eval_out_avals(eqn.primitive, in_avals, eqn.params)
        if len(out_avals) != len(eqn.outvars):
            raise JaxprTypeError(f"{eqn.primitive}: {len(out_avals)} results for "
                                 f"{len(eqn.outvars)} binders")
        for v, aval in zip(eqn.outvars, out_avals):
            if v.aval.shape != aval.shape or v.aval.dtype != aval.dtype:
                raise JaxprTypeError(f"{eqn.primitive}: binder type {v.aval.str_short()} "
                                     f"differs from the inferred {aval.str_short()}")
            bind(v)
    for x in jaxpr.outvars:
        read(x)


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence, *args) -> list:
    """Evaluate a jaxpr on values (concrete, or tracers of the transforms around the call):
    each equation's primitive is bound, so the innermost active transform interprets it.

    >>> import functrans as ft
    >>> closed = ft.make_jaxpr(lambda x: x * 2.0 + 1.0)(0.0)
    >>> ft.eval_jaxpr(closed.jaxpr, closed.consts, 3.0)
    [7.0]
    """
    if len(consts) != len(jaxpr.constvars) or len(args) != len(jaxpr.invars):
        raise TypeError(f"eval_jaxpr: the jaxpr takes {len(jaxpr.constvars)} constants and "
                        f"{len(jaxpr.invars)} arguments, got {len(consts)} constants and "
                        f"{len(args)} arguments")
    env = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    for v, x in zip(jaxpr.invars, args):
        env[v] = x

    def read(x):
        return x.val if type(x) is Literal else env[x]

    for eqn in jaxpr.eqns:
        outs = eqn.primitive.bind(*[read(x) for x in eqn.invars], **eqn.params)
        if eqn.primitive.multiple_results:
            for v, out in zip(eqn.outvars, outs):
                env[v] = out
        else:
            env[eqn.outvars[0]] = outs
    return [read(x) for x in jaxpr.outvars]
