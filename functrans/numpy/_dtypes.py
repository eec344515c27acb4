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
from numpy import (bool_, character, complex64, complex128, complexfloating, dtype, finfo,
                   flexible, float16, float32, float64, floating, generic, iinfo, inexact,
                   int8, int16, int32, int64, integer, issubdtype, ndarray,
                   number, object_, signedinteger, uint8, uint16, uint32, uint64,
                   unsignedinteger)

from functrans import lax
from functrans.core import Tracer, get_aval
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


def astype(x, dtype):
    """``x`` converted to ``dtype``.

    >>> import functrans.numpy as fnp
    >>> fnp.astype(fnp.asarray([1.5, -2.5]), fnp.int32)
    array([ 1, -2], dtype=int32)
    """
    return lax.convert_element_type(arg(x), dtype)


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
    np.float32(4.0)
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
    if isinstance(y, Tracer):
        return len(get_aval(y).shape) > 0
    return np.iterable(y)


bool = np.bool  # noqa: A001 (JAX's name; no function above calls the builtin)
