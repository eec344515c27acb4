"""Dtypes: their names (``float32``, ``int64``, ...), promotion and limits (``result_type``,
``finfo``), and conversion of values (``astype``).

The names and queries are NumPy's own objects, re-exported so that code written for
``numpy`` finds them.  A new dtype name or dtype query goes here.
"""
from __future__ import annotations

from numpy import (bool_, complex64, complex128, dtype, finfo, float16, float32, float64,
                   iinfo, int8, int16, int32, int64, iscomplexobj, issubdtype, ndarray,
                   result_type, uint8, uint32, uint64)

from functrans import lax
from functrans.numpy._util import arg

__all__ = ["bool_", "complex64", "complex128", "dtype", "float16", "float32", "float64",
           "int8", "int16", "int32", "int64", "uint8", "uint32", "uint64", "ndarray",
           "result_type", "iscomplexobj", "issubdtype", "finfo", "iinfo", "astype"]


def astype(x, dtype):
    """``x`` converted to ``dtype``.

    >>> import functrans.numpy as fnp
    >>> fnp.astype(fnp.asarray([1.5, -2.5]), fnp.int32)
    array([ 1, -2], dtype=int32)
    """
    return lax.convert_element_type(arg(x), dtype)
