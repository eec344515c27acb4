"""``functrans.dtypes``: JAX's ``jax.dtypes`` names for dtype queries.

functrans computes with NumPy's dtypes and promotion (NEP 50) and never narrows 64-bit
types, so ``canonicalize_dtype`` is ``numpy.dtype`` with JAX's signature.  ``result_type``
knows weak types (a Python scalar, or a tracer standing for one, does not widen an array);
``float0`` is the dtype of the tangents of integer and boolean values.  ``bfloat16`` is
offered when the optional ``ml_dtypes`` package is installed.

>>> import numpy as np
>>> from functrans import dtypes
>>> dtypes.result_type(np.float32(1.0), 2.0)
dtype('float32')
>>> dtypes.result_type(2.0, 3, return_weak_type_flag=True)
(dtype('float64'), True)
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy import finfo, iinfo

from functrans.core import ShapedArray, Tracer, float0, get_aval
from functrans.core import result_type as _promote

__all__ = ["canonicalize_dtype", "finfo", "float0", "iinfo", "issubdtype", "itemsize_bits",
           "result_type", "scalar_type_of"]

try:  # optional: JAX depends on ml_dtypes, functrans does not
    import ml_dtypes
    from ml_dtypes import bfloat16
except ImportError:  # pragma: no cover - depends on the environment
    ml_dtypes = None  # type: ignore[assignment, unused-ignore]  # absent: itemsize_bits skips its types
else:
    __all__.append("bfloat16")


def canonicalize_dtype(dtype: Any, allow_extended_dtype: bool = False) -> np.dtype:
    """``dtype`` as a ``numpy.dtype``.  JAX narrows 64-bit types here when its x64 mode is
    off; functrans always computes with the dtype asked for.

    >>> from functrans import dtypes
    >>> dtypes.canonicalize_dtype("float32"), dtypes.canonicalize_dtype(int)
    (dtype('float32'), dtype('int64'))
    """
    del allow_extended_dtype  # functrans has no extended dtypes
    return np.dtype(dtype)


def issubdtype(a: Any, b: Any) -> bool:
    """Whether dtype ``a`` is ``b`` or below it in NumPy's hierarchy (``float0`` is a
    dtype of its own, below nothing but itself).

    >>> import numpy as np
    >>> from functrans import dtypes
    >>> dtypes.issubdtype(np.float32, np.floating), dtypes.issubdtype(dtypes.float0, np.floating)
    (True, False)
    """
    if isinstance(a, np.dtype) and a == float0 or isinstance(b, np.dtype) and b == float0:
        return isinstance(a, np.dtype) and isinstance(b, np.dtype) and a == b
    return bool(np.issubdtype(a, b))


def _aval_of(x) -> ShapedArray:
    """The abstract value promotion reads for a value, a tracer or a dtype specifier."""
    if isinstance(x, (Tracer, bool, int, float, complex)) or (
            not isinstance(x, type) and hasattr(x, "shape")):
        return get_aval(x)
    return ShapedArray((), np.dtype(x))  # a dtype, a scalar type or its name


def result_type(*args: Any, return_weak_type_flag: bool = False):
    """The dtype of an operation on ``args`` (arrays, tracers, scalars, dtypes) under
    NumPy's promotion, with Python scalars weakly typed; with ``return_weak_type_flag``,
    ``(dtype, weak)`` where ``weak`` says that every argument was a Python scalar.

    >>> import numpy as np
    >>> from functrans import dtypes
    >>> dtypes.result_type(np.int8, np.float16), dtypes.result_type(np.ones(2, np.int32), 1.0)
    (dtype('float16'), dtype('float64'))
    """
    if not args:
        raise ValueError("result_type: at least one argument is required")
    dtype, weak = _promote(*[_aval_of(x) for x in args])
    return (dtype, weak) if return_weak_type_flag else dtype


def itemsize_bits(dtype: Any) -> int:
    """The number of bits one element of ``dtype`` holds: 8 for ``bool`` (a byte each),
    the width of an integer or float type, twice the width of its parts for a complex one,
    and the true width of ``ml_dtypes``' sub-byte types (4 for ``int4``), not the byte
    NumPy stores them in.

    >>> import numpy as np
    >>> from functrans import dtypes
    >>> dtypes.itemsize_bits(np.float32), dtypes.itemsize_bits(bool), dtypes.itemsize_bits("complex128")
    (32, 8, 128)
    """
    if dtype is None:
        raise ValueError("dtypes.itemsize_bits: dtype cannot be None")
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return 8
    if dt.kind in "iu":
        return int(np.iinfo(dt).bits)
    if dt.kind == "f":
        return int(np.finfo(dt).bits)
    if dt.kind == "c":
        return 2 * int(np.finfo(dt).bits)
    if ml_dtypes is not None and dt.kind == "V" and dt.fields is None:
        for info in (ml_dtypes.finfo, ml_dtypes.iinfo):  # their sub-byte and 8-bit types
            try:
                return int(info(dt).bits)
            except ValueError:
                pass
    raise ValueError(f"dtypes.itemsize_bits: dtype must be a boolean, integer, floating or "
                     f"complex dtype, got {dt}")


def scalar_type_of(x: Any) -> type:
    """The Python scalar type (``bool``, ``int``, ``float`` or ``complex``) of the values
    of ``x``'s dtype.

    >>> import numpy as np
    >>> from functrans import dtypes
    >>> dtypes.scalar_type_of(np.float32(1.0)), dtypes.scalar_type_of(np.arange(2))
    (<class 'float'>, <class 'int'>)
    """
    kind = _aval_of(x).dtype.kind
    return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[kind]


def __dir__() -> list[str]:
    return sorted(__all__)
