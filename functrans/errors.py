"""JAX's error classes (``jax.errors``), the very classes functrans raises, so that
``except functrans.errors.TracerBoolConversionError:`` catches what it names:

* ``ConcretizationTypeError``: Python needed a concrete value of an abstract tracer;
* ``TracerBoolConversionError`` (a ``ConcretizationTypeError``): ``bool()`` of one, as in
  ``if x > 0:`` under ``jit``;
* ``TracerIntegerConversionError`` (also a ``ConcretizationTypeError`` here, unlike in
  JAX): ``int()`` of one, or one used as a Python index;
* ``TracerArrayConversionError``: ``np.asarray`` of a tracer;
* ``NonConcreteBooleanIndexError`` (an ``IndexError``, and a ``TypeError``): a traced
  boolean mask indexing an array;
* ``UnexpectedTracerError``: a tracer used after its transform ended (a leak);
* ``JaxprTypeError``: ``check_jaxpr`` found an ill-typed jaxpr.

JAX's ``KeyReuseError``, ``JaxRuntimeError``, ``JAXTypeError``, ``JAXIndexError`` and
``InconclusiveDimensionOperation`` are left out: functrans raises none of them (it does
not track key reuse, has no XLA runtime, and no symbolic shapes).

>>> import functrans as ft, functrans.numpy as fnp
>>> try:
...     ft.jit(lambda x: 1.0 if x > 0 else -1.0)(2.0)
... except ft.errors.TracerBoolConversionError:
...     print("bool() of a traced value")
...
bool() of a traced value
"""
from __future__ import annotations

from functrans.core import (ConcretizationTypeError, JaxprTypeError,
                            NonConcreteBooleanIndexError, TracerArrayConversionError,
                            TracerBoolConversionError, TracerIntegerConversionError,
                            UnexpectedTracerError)

__all__ = ["ConcretizationTypeError", "JaxprTypeError", "NonConcreteBooleanIndexError",
           "TracerArrayConversionError", "TracerBoolConversionError",
           "TracerIntegerConversionError", "UnexpectedTracerError"]


def __dir__() -> list[str]:
    return sorted(__all__)
