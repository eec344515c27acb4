"""Argument promotion shared by ``functrans.scipy``'s modules (public inside the package;
nothing here is part of its API)."""
from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans import core, lax
from functrans.core import get_aval

__all__ = ["inexact", "inexact_all"]


def inexact(x):
    """``x`` as an array (lists converted), integers and booleans as float64 (weakly typed
    if they were, so that a Python int next to float32 keeps float32)."""
    if isinstance(x, (list, tuple)):
        x = fnp.asarray(x)
    aval = get_aval(x)
    if core.is_inexact(aval.dtype):
        return x
    return lax.convert_element_type(x, np.float64, aval.weak_type)


def inexact_all(*args) -> list:
    """The arguments converted to their common dtype (NumPy's promotion, Python scalars
    weak), float64 if that is an integer or boolean type."""
    args = [fnp.asarray(a) if isinstance(a, (list, tuple)) else a  # type: ignore[assignment]
            for a in args]
    dtype, weak = core.result_type(*[get_aval(a) for a in args])
    if not core.is_inexact(dtype):
        dtype = np.dtype(np.float64)
    return [a if get_aval(a).dtype == dtype else lax.convert_element_type(a, dtype, weak)
            for a in args]
