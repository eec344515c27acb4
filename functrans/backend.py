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
