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


def memory_owner(x):
    """The array that owns the memory of ``x`` (``x`` itself unless it is a view)."""
    base = x.base
    while base is not None and is_array(base):
        x, base = base, base.base
    return x


def owned(values: list, others=(), check_aliasing: bool = True) -> list:
    """``values`` as arrays the caller may freely write to.  A read-only NumPy array (a
    broadcast view, say) is copied; with ``check_aliasing``, so is an array sharing memory
    with one of ``others`` (the caller's inputs) or with an earlier entry of ``values``.
    Tracers, scalars and other values pass through unchanged."""
    seen = {id(memory_owner(x)) for x in others if is_array(x)} if check_aliasing else ()
    out = []
    for v in values:
        if is_array(v):
            if type(v) is np.ndarray and not v.flags.writeable:
                v = v.copy()
            elif check_aliasing and id(memory_owner(v)) in seen:
                v = v.copy()
            if check_aliasing:
                seen.add(id(memory_owner(v)))
        out.append(v)
    return out
