"""The operators and methods of tracers (``x @ w``, ``x.T``, ``x.sum()``, ``x[1:]``), and
NumPy's dispatch of its own functions on tracers to ours (``np.sin(x)``, ``np.sum(x)``).

What dispatches is the two tables below, ``NUMPY_FUNCTIONS`` and ``UFUNCS`` (a NumPy
function or ufunc -> the functrans.numpy function of the same name), built from the
families' ``__all__``: a new family function with a NumPy name dispatches with no change
here.  A new tracer method or operator is one entry in ``TRACER_METHODS``.
"""
from __future__ import annotations

import builtins
import sys
from typing import Any, Callable

import numpy as np

import functrans.numpy._array_api as array_api
import functrans.numpy._contractions as contractions
import functrans.numpy._creation as creation
import functrans.numpy._dtypes as dtypes
import functrans.numpy._elementwise as elementwise
import functrans.numpy._functional as functional
import functrans.numpy._index_tricks as index_tricks
import functrans.numpy._indexing as indexing
import functrans.numpy._padding as padding
import functrans.numpy._polynomial as polynomial
import functrans.numpy._reductions as reductions
import functrans.numpy._shape as shapes
import functrans.numpy._sorting as sorting
import functrans.numpy._statistics as statistics
from functrans import backend
from functrans.array_types import (WEAK_UFUNCS, Array, WeakArray, result_type_attributes,
                                   user_result, weak_result, weak_type_attributes)
from functrans.core import Tracer, TracerArrayConversionError
from functrans.numpy import fft, linalg
from functrans.numpy._devices import device_of, move_to_device
from functrans.numpy._contractions import dot, matmul
from functrans.numpy._dtypes import astype
from functrans.numpy._elementwise import (absolute, add, bitwise_and, bitwise_or, bitwise_xor,
                                          clip, conj, divmod, equal, floor_divide, greater,
                                          greater_equal, imag, invert, left_shift, less,
                                          less_equal, mod, multiply, negative, not_equal,
                                          positive, power, real, right_shift, round, subtract,
                                          true_divide)
from functrans.numpy._indexing import IndexUpdateHelper, diagonal, getitem, setitem, take
from functrans.numpy._reductions import (all, any, argmax, argmin, cumprod, cumsum, max, mean,
                                         min, prod, std, sum, trace, var)
from functrans.numpy._shape import (matrix_transpose, ravel, repeat, reshape, squeeze, swapaxes,
                                    transpose)

__all__ = ["TRACER_METHODS", "NUMPY_FUNCTIONS", "UFUNCS", "SUPPORTED_API_VERSIONS",
           "RESULT_OPERATORS",
           "install_tracer_methods",
           "unsupported_numpy_error"]


def _reflected(f):
    return lambda self, other: f(other, self)


def _method_reshape(self, *shape, order="C"):
    return reshape(self, shape[0] if len(shape) == 1 else shape, order)


def _method_transpose(self, *axes):
    return transpose(self, None if not axes else (axes[0] if len(axes) == 1 and not isinstance(
        axes[0], int) else axes))


def _namespace():
    return sys.modules["functrans.numpy"]  # the package, imported by the time it is asked for


def _array_namespace(self, /, *, api_version=None):
    """The array API namespace of this array: ``functrans.numpy``."""
    if api_version is not None and api_version not in SUPPORTED_API_VERSIONS:
        raise ValueError(f"__array_namespace__: api_version={api_version!r} is not one of "
                         f"the supported revisions {', '.join(SUPPORTED_API_VERSIONS)}")
    return _namespace()


#: the array API revisions functrans.numpy follows (the last is __array_api_version__)
SUPPORTED_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")


def _to_device(self, device, /, *, stream=None):
    """This traced value on ``device``: only its own device is possible inside a transform."""
    if stream is not None:
        raise ValueError("to_device: streams are not supported")
    return move_to_device("to_device", self, device)


def _dlpack(self, *args, **kwargs):
    self._check_alive()
    raise TypeError(
        f"__dlpack__ of a traced value ({self.aval.str_short()}): a tracer is an abstract "
        "value inside a transform and has no memory to share, so it cannot be exported "
        "through DLPack (from_dlpack, torch.from_dlpack, ...). Compute on it with the "
        "functions of its namespace (x.__array_namespace__(), functrans.numpy), and export "
        "the transform's concrete results instead.")


TRACER_METHODS = {
    "__add__": add, "__radd__": _reflected(add),
    "__sub__": subtract, "__rsub__": _reflected(subtract),
    "__mul__": multiply, "__rmul__": _reflected(multiply),
    "__truediv__": true_divide, "__rtruediv__": _reflected(true_divide),
    "__pow__": power, "__rpow__": _reflected(power),
    "__matmul__": matmul, "__rmatmul__": _reflected(matmul),
    "__neg__": negative, "__pos__": positive, "__abs__": absolute,
    "__eq__": equal, "__ne__": not_equal, "__lt__": less, "__le__": less_equal,
    "__gt__": greater, "__ge__": greater_equal,
    "__floordiv__": floor_divide, "__rfloordiv__": _reflected(floor_divide),
    "__mod__": mod, "__rmod__": _reflected(mod),
    "__divmod__": divmod, "__rdivmod__": _reflected(divmod),
    "__and__": bitwise_and, "__rand__": _reflected(bitwise_and),
    "__or__": bitwise_or, "__ror__": _reflected(bitwise_or),
    "__xor__": bitwise_xor, "__rxor__": _reflected(bitwise_xor),
    "__lshift__": left_shift, "__rlshift__": _reflected(left_shift),
    "__rshift__": right_shift, "__rrshift__": _reflected(right_shift),
    "__invert__": invert,
    "__getitem__": getitem, "__setitem__": setitem,
    "sum": sum, "mean": mean, "max": max, "min": min, "var": var, "std": std,
    "argmax": argmax, "argmin": argmin, "dot": dot, "conj": conj, "conjugate": conj,
    "reshape": _method_reshape, "transpose": _method_transpose, "ravel": ravel,
    "flatten": ravel, "squeeze": squeeze, "astype": astype, "clip": clip,
    "swapaxes": swapaxes, "all": all, "any": any, "round": round, "diagonal": diagonal,
    "trace": trace, "repeat": repeat, "prod": prod, "cumsum": cumsum, "cumprod": cumprod,
    "take": take, "__array_namespace__": _array_namespace, "to_device": _to_device,
    "__dlpack__": _dlpack, "__dlpack_device__": _dlpack,
}

# NumPy calls __array_function__ of a creation-from-shape function only for `like=` a
# tracer; ours would hand the call straight back to NumPy, so NumPy's error stands.
_NOT_DISPATCHED = frozenset({"asarray", "array", "zeros", "ones", "full", "empty", "arange",
                             "linspace", "eye", "identity"})


def _counterparts(numpy_namespace, families) -> dict:
    """NumPy function -> ours, for every function the families export under a name that
    ``numpy_namespace`` also has (NumPy's own objects re-exported as they are left out)."""
    table: dict = {}
    for family in families:
        for name in family.__all__:
            ours, theirs = getattr(family, name), getattr(numpy_namespace, name, None)
            if (callable(theirs) and theirs is not ours and not isinstance(ours, type)
                    and name not in _NOT_DISPATCHED):
                table.setdefault(theirs, ours)  # the first of aliases (absolute, not abs)
    return table


#: the family modules of functrans.numpy (a new family module is added here, and its
#: functions then dispatch from NumPy's namesakes)
FAMILIES = (elementwise, reductions, statistics, shapes, padding, indexing, index_tricks,
            contractions, creation, dtypes, polynomial, functional, sorting, array_api)

_ALL = {**_counterparts(np, FAMILIES),
        **_counterparts(np.linalg, [linalg]), **_counterparts(np.fft, [fft])}

#: NumPy function -> functrans.numpy function, for ``np.sum(tracer)`` and the like
NUMPY_FUNCTIONS = {f: fn for f, fn in _ALL.items() if not isinstance(f, np.ufunc)}

#: NumPy ufunc -> functrans.numpy function, for ``np.sin(tracer)`` and ``ndarray + tracer``
UFUNCS = {f: fn for f, fn in _ALL.items() if isinstance(f, np.ufunc)}


#: the names functrans.numpy offers, for pointing an unsupported NumPy call to ours
_OUR_NAMES = frozenset(name for family in FAMILIES for name in family.__all__)


def unsupported_numpy_error(name: str, detail: str = "") -> TracerArrayConversionError:
    """The one error for a NumPy function or ufunc that cannot run on a tracer."""
    if name in _OUR_NAMES or name in {f"{module.__name__.rsplit('.', 1)[-1]}.{n}"
                                      for module in (linalg, fft) for n in module.__all__}:
        advice = f"use functrans.numpy.{name} instead"
    else:
        advice = (f"functrans.numpy has no {name}: write it with functrans.numpy / "
                  "functrans.lax functions, or call NumPy outside the transform")
    return TracerArrayConversionError(
        f"numpy.{name}{detail} cannot be applied to a functrans tracer (a traced value inside "
        "grad, jvp, vjp, vmap, ...): NumPy would need a concrete array and drop the "
        f"derivative or batch; {advice}. NumPy functions and ufuncs that functrans.numpy also "
        "defines (np.sin, np.sum, np.dot, ...) dispatch to it automatically.")


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """NumPy ufuncs on tracers run the functrans.numpy function of the same name."""
    fn = UFUNCS.get(ufunc)
    if method != "__call__" or fn is None or kwargs:
        name = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        raise unsupported_numpy_error(
            name, f" with keyword arguments {', '.join(kwargs)}" if kwargs else "")
    return fn(*inputs)


def _array_function(self, func, types, args, kwargs):
    """NumPy functions on tracers run the functrans.numpy function of the same name, when
    there is one."""
    fn = NUMPY_FUNCTIONS.get(func)
    if fn is None:
        module = getattr(func, "__module__", "") or ""
        prefix = next((f"{sub}." for sub in ("linalg", "fft") if module.endswith(sub)), "")
        raise unsupported_numpy_error(prefix + func.__name__)
    return fn(*args, **kwargs)


def _getitem_of(base: Any):
    """``x[index]`` for the result arrays extending ``base`` (``Array`` over
    ``numpy.ndarray``, its device counterpart over ``cupy.ndarray``): ``base``'s own, unless
    a tracer is in the index (a loop counter, a vmapped position), which the array library
    cannot take and functrans.numpy can."""
    base_getitem = base.__getitem__

    def __getitem__(self, index):
        if _holds_tracer(index):
            return getitem(self.view(type=base), index)
        out = base_getitem(self, index)
        if isinstance(out, np.generic):  # one element: a 0-d array, as JAX gives
            return weak_result(out) if self.weak_type else user_result(out)
        return out
    return __getitem__


#: reduction methods whose ``axis`` JAX takes as a list too (NumPy's take ints and tuples)
LIST_AXIS_METHODS = ("all", "any", "max", "mean", "min", "prod", "std", "sum", "var")


def _list_axis_of(name: str):
    """The reduction method ``name`` of the result arrays extending ``base``: ``base``'s
    own, with a list ``axis`` read as a tuple."""
    def make(base: Any):
        method = getattr(base, name, None)
        if method is None:  # an array type without it keeps not having it
            def missing(self):
                raise AttributeError(f"'{base.__name__}' object has no attribute '{name}'")
            return property(missing)

        def reduction(self, axis=None, *args, **kwargs):
            if type(axis) is list:
                axis = tuple(axis)
            return method(self, axis, *args, **kwargs)
        reduction.__name__ = reduction.__qualname__ = name
        reduction.__doc__ = method.__doc__
        return reduction
    return make


def _holds_tracer(index) -> bool:
    """Whether a tracer is in ``index``, or in the (nested) lists and tuples it holds."""
    if isinstance(index, Tracer):
        return True
    return isinstance(index, (tuple, list)) and builtins.any(_holds_tracer(i) for i in index)


#: operators of the arrays functrans hands out that follow functrans.numpy where it
#: differs from NumPy (floor division by infinities: docs/array_api.md)
RESULT_OPERATORS = {"__floordiv__": floor_divide, "__rfloordiv__": _reflected(floor_divide)}


#: tracer methods the weakly typed arrays keep from their bases (``Array``'s)
_KEPT_BY_WEAK_ARRAYS = frozenset({"__getitem__", "__setitem__", "__array_namespace__",
                                  "to_device", "__dlpack__", "__dlpack_device__"})


#: the binary operators, which give the other operand's own operator a turn when it is
#: not something functrans computes with (``w == pytest.approx(1.0)``)
_BINARY_OPERATORS = frozenset(
    name for name in TRACER_METHODS if name.startswith("__") and name[2:-2] in {
        op for base in ("add", "sub", "mul", "truediv", "pow", "matmul", "floordiv", "mod",
                        "divmod", "and", "or", "xor", "lshift", "rshift")
        for op in (base, "r" + base)} | {"eq", "ne", "lt", "le", "gt", "ge"})


def _deferring(operator):
    """The binary ``operator``, returning NotImplemented for an operand that is not an
    array, a tracer, a number or a (nested) list of them."""
    def method(self, other):
        if not (isinstance(other, (np.ndarray, np.generic, Tracer, int, float, complex, list,
                                   tuple)) or backend.is_array(other)):
            return NotImplemented
        return operator(self, other)
    method.__name__ = method.__qualname__ = getattr(operator, "__name__", "operator")
    return method


def _same_for_every_base(fn) -> Callable[[type], Any]:
    """An entry of ``result_type_attributes`` that installs ``fn`` whatever the base type."""
    return lambda base: fn


def install_tracer_methods() -> None:
    """Give ``Tracer`` the operators and methods of arrays, and NumPy's dispatch hooks."""
    for name, fn in TRACER_METHODS.items():
        setattr(Tracer, name, fn)
    # Assigned here, not in core.Tracer's body: core cannot import functrans.numpy.
    Tracer.__array_ufunc__ = _array_ufunc  # type: ignore[assignment]
    Tracer.__array_function__ = _array_function  # type: ignore[attr-defined]
    Tracer.T = property(lambda self: transpose(self))  # type: ignore[attr-defined]
    Tracer.mT = property(matrix_transpose)  # type: ignore[attr-defined]
    Tracer.device = property(device_of)  # type: ignore[attr-defined]
    Tracer.at = property(IndexUpdateHelper)  # type: ignore[attr-defined]
    # What the arrays handed out outside transforms gain: Array now, device arrays' result
    # type when one is first made (array_types.device_result_type).
    result_type_attributes["at"] = lambda base: property(IndexUpdateHelper)
    result_type_attributes["__getitem__"] = _getitem_of
    for name in LIST_AXIS_METHODS:
        result_type_attributes[name] = _list_axis_of(name)
    result_type_attributes["__array_namespace__"] = lambda base: _array_namespace
    for name, fn in RESULT_OPERATORS.items():
        result_type_attributes[name] = _same_for_every_base(fn)
    for name, make in result_type_attributes.items():
        setattr(Array, name, make(np.ndarray))
    # Weakly typed arrays compute as tracers do, with functrans.numpy (their types then
    # promote weakly); indexing with concrete indices stays NumPy's (a view, still weak).
    for name, fn in TRACER_METHODS.items():
        if name not in _KEPT_BY_WEAK_ARRAYS:
            if name in _BINARY_OPERATORS:
                fn = _deferring(fn)
            weak_type_attributes[name] = fn
            setattr(WeakArray, name, fn)
    WEAK_UFUNCS.update(UFUNCS)
    Array.register(Tracer)  # isinstance(tracer, Array), as for jax.Array
    Tracer.real = property(real)  # type: ignore[attr-defined]
    Tracer.imag = property(imag)  # type: ignore[attr-defined]
