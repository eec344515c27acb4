"""Dtypes: their names (``float32``, ``int64``, ..., and the abstract classes such as
``floating``), promotion and limits (``result_type``, ``promote_types``, ``can_cast``,
``finfo``), and conversion of values (``astype``).

The names and limits are NumPy's own objects, re-exported so that code written for
``numpy`` finds them; the queries are ours, so that they accept tracers as well as arrays
(``numpy.result_type(tracer)`` dispatches here).  A new dtype name or dtype query goes here.
"""
from __future__ import annotations

import builtins

import numpy as np
from numpy import (bool_, character, complex64, complex128, complexfloating, dtype,
                   flexible, float16, float32, float64, floating, generic, inexact,
                   int8, int16, int32, int64, integer, issubdtype, ndarray,
                   number, object_, signedinteger, uint8, uint16, uint32, uint64,
                   unsignedinteger)

from functrans import lax
from functrans import backend
from functrans.array_types import user_result
from functrans.core import Tracer, get_aval
from functrans.numpy._devices import move_to_device
from functrans.numpy._util import arg

__all__ = ["bool_", "complex64", "complex128", "dtype", "float16", "float32", "float64",
           "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "ndarray",
           "result_type", "iscomplexobj", "issubdtype", "finfo", "iinfo", "astype",
           "bool", "single", "double", "csingle", "cdouble", "float_", "complex_", "int_",
           "uint", "generic", "number", "inexact", "floating", "complexfloating", "integer",
           "signedinteger", "unsignedinteger", "character", "flexible", "object_",
           "promote_types", "can_cast", "broadcast_shapes", "isdtype", "iterable"]

# JAX's spellings of NumPy's scalar types (``float_`` and ``complex_`` left NumPy in 2.0).
single, double, csingle, cdouble = np.float32, np.float64, np.complex64, np.complex128
float_, complex_, int_, uint = np.float64, np.complex128, np.int64, np.uint64


def astype(x, dtype, /, *, copy=True, device=None):
    """``x`` converted to ``dtype``, on ``device`` when given.  As in the array API,
    ``copy=True`` (the default) gives a new array even when nothing changes, and
    ``copy=False`` returns ``x`` itself when it already has ``dtype``.  Traced values are
    never changed in place, so a tracer of the dtype is returned as it is either way.

    >>> import functrans.numpy as fnp
    >>> fnp.astype(fnp.asarray([1.5, -2.5]), fnp.int32)
    array([ 1, -2], dtype=int32)
    """
    x = arg(x)
    out = lax.convert_element_type(x, dtype)
    if copy and out is x and not isinstance(x, Tracer) and not np.isscalar(x):
        out = user_result(backend.copy(x))
    return move_to_device("astype", out, device)


def _dtype_or_value(x):
    """What NumPy's promotion reads for ``x``: a tracer's dtype (a weakly typed one as the
    Python scalar of its kind, which does not upcast arrays), anything else as it is."""
    if isinstance(x, Tracer):
        aval = get_aval(x)
        if aval.weak_type:
            return {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}[aval.dtype.kind]
        return aval.dtype
    return x


def result_type(*arrays_and_dtypes):
    """The dtype NumPy's promotion gives for these arrays, tracers, scalars and dtypes;
    ``numpy.result_type(tracer)`` comes here too.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> fnp.result_type(np.float32, 2.0)
    dtype('float32')
    >>> ft.grad(lambda x: x * np.result_type(x, np.int8).itemsize)(np.float32(1.0))
    array(4., dtype=float32)
    """
    return np.result_type(*[_dtype_or_value(x) for x in arrays_and_dtypes])


def iscomplexobj(x) -> builtins.bool:
    """Whether ``x`` (an array, a tracer, a scalar, a sequence) has a complex dtype; decided
    by the dtype only, so it works on tracers and gives a Python bool.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> fnp.iscomplexobj(np.array([1 + 0j])), fnp.iscomplexobj(2.0)
    (True, False)
    >>> ft.jit(lambda x: x * 2 if fnp.iscomplexobj(x) else x)(np.ones(2))
    array([1., 1.])
    """
    if x is None:
        return False
    if isinstance(x, Tracer):
        return get_aval(x).dtype.kind == "c"
    return builtins.bool(np.iscomplexobj(x))


def promote_types(a, b):
    """The smallest dtype both ``a`` and ``b`` convert to safely.

    >>> import functrans.numpy as fnp
    >>> fnp.promote_types(fnp.int8, fnp.float32)
    dtype('float32')
    """
    return np.promote_types(a, b)


def can_cast(from_, to, casting: str = "safe"):
    """Whether ``from_`` (a dtype, array or tracer) converts to ``to`` under the
    ``casting`` rule ('no', 'equiv', 'safe', 'same_kind' or 'unsafe').

    >>> import functrans.numpy as fnp
    >>> fnp.can_cast(fnp.asarray([1, 2]), fnp.float64), fnp.can_cast(fnp.float64, fnp.int32)
    (True, False)
    """
    if not isinstance(from_, (np.dtype, type, str)):
        from_ = get_aval(arg(from_)).dtype
    return np.can_cast(from_, to, casting)  # type: ignore[arg-type]  # NumPy checks the name


def broadcast_shapes(*shapes):
    """The shape that arrays of the given shapes broadcast to.

    >>> import functrans.numpy as fnp
    >>> fnp.broadcast_shapes((3, 1), (4,))
    (3, 4)
    """
    return np.broadcast_shapes(*shapes)


def isdtype(dtype, kind):
    """Whether ``dtype`` is of ``kind``: a dtype, or one of the array API's names ('bool',
    'signed integer', 'unsigned integer', 'integral', 'real floating', 'complex
    floating', 'numeric'), or a tuple of them.

    >>> import functrans.numpy as fnp
    >>> fnp.isdtype(fnp.float32, "real floating"), fnp.isdtype(fnp.int8, ("bool", "integral"))
    (True, True)
    """
    return np.isdtype(np.dtype(dtype), kind)


def iterable(y):
    """Whether ``iter(y)`` works (a tracer of at least one axis is iterable).

    >>> import functrans.numpy as fnp
    >>> fnp.iterable([1, 2]), fnp.iterable(3.0)
    (True, False)
    """
    if isinstance(y, Tracer) or backend.is_lazy(y):  # a 0-d dask array has __iter__ too
        return len(get_aval(y).shape) > 0
    return np.iterable(y)


def _dtype_of_argument(name: str, type_or_array) -> np.dtype:
    """The dtype that ``finfo`` / ``iinfo`` describe: that of an array or tracer, or the
    dtype (or name, or scalar type) given."""
    if isinstance(type_or_array, Tracer) or backend.is_array(type_or_array):
        return get_aval(type_or_array).dtype
    try:
        return np.dtype(type_or_array)
    except TypeError:
        raise TypeError(f"{name}: expected a dtype or an array, got {type_or_array!r}") from None


class finfo:  # noqa: N801 (NumPy's and the array API's name)
    """The limits of a floating-point dtype (of a complex one: of its real part), given as
    a dtype or an array or tracer of it.  The array API's fields (``bits``, ``eps``,
    ``max``, ``min``, ``smallest_normal``; ``dtype``, the real dtype) are Python numbers;
    NumPy's other fields (``tiny``, ``resolution``, ``precision``, ...) are NumPy's.

    >>> import numpy as np, functrans.numpy as fnp
    >>> info = fnp.finfo(np.ones(2, np.float32))
    >>> info.bits, info.eps == 2.0 ** -23, type(info.max).__name__
    (32, True, 'float')
    """

    def __init__(self, type_or_array):
        dt = _dtype_of_argument("finfo", type_or_array)
        if dt.kind not in "fc":
            raise ValueError(f"finfo: {dt} is not a floating-point dtype; use iinfo for "
                             "integers")
        self._numpy = np.finfo(dt)
        self.bits = int(self._numpy.bits)
        self.eps, self.max, self.min = (float(self._numpy.eps), float(self._numpy.max),
                                        float(self._numpy.min))
        self.smallest_normal = float(self._numpy.smallest_normal)
        self.dtype = self._numpy.dtype

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._numpy, name)

    def __repr__(self):
        return (f"finfo(bits={self.bits}, eps={self.eps}, max={self.max}, min={self.min}, "
                f"smallest_normal={self.smallest_normal}, dtype={self.dtype})")


class iinfo:  # noqa: N801
    """The limits of an integer dtype, given as a dtype or an array or tracer of it:
    ``bits``, ``max`` and ``min`` as Python ints, and ``dtype``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.iinfo(np.int8).min, fnp.iinfo(np.zeros(2, np.uint16)).max
    (-128, 65535)
    """

    def __init__(self, type_or_array):
        dt = _dtype_of_argument("iinfo", type_or_array)
        if dt.kind not in "iu":
            raise ValueError(f"iinfo: {dt} is not an integer dtype; use finfo for "
                             "floating-point dtypes")
        self._numpy = np.iinfo(dt)
        self.bits, self.max, self.min = (int(self._numpy.bits), int(self._numpy.max),
                                         int(self._numpy.min))
        self.dtype = dt

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._numpy, name)

    def __repr__(self):
        return f"iinfo(bits={self.bits}, max={self.max}, min={self.min}, dtype={self.dtype})"


bool = np.bool  # noqa: A001 (JAX's name; no function above calls the builtin)
