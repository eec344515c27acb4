"""Which array module (NumPy or CuPy) a primitive's impl should use for its inputs.

Impls never move device arrays to the host: they compute with the module their inputs come
from.  CuPy is optional and only imported when a CuPy array is actually seen.
"""
from __future__ import annotations

import numpy as np


def array_module(*args):
    """``cupy`` if any argument is a CuPy array, else ``numpy``."""
    for x in args:
        if type(x).__module__.startswith("cupy"):
            import cupy
            return cupy
    return np


def is_array(x) -> bool:
    return isinstance(x, np.ndarray) or type(x).__module__.startswith("cupy")


def coerce(xp, *args) -> tuple:
    """``args`` ready for ``xp``: with CuPy, host (NumPy) arrays among them, such as the
    constants that rules create, are moved to the device; with NumPy nothing changes."""
    if xp is np:
        return args
    return tuple(xp.asarray(a) if isinstance(a, (np.ndarray, np.generic)) else a for a in args)
