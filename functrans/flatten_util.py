"""``functrans.flatten_util``: JAX's ``ravel_pytree``, a pytree of arrays as one flat
vector and back.

>>> import numpy as np
>>> from functrans.flatten_util import ravel_pytree
>>> flat, unravel = ravel_pytree({"b": np.zeros(2), "w": np.ones((2, 2))})
>>> flat
array([0., 0., 1., 1., 1., 1.])
>>> unravel(flat)["w"].shape
(2, 2)
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from functrans import lax
from functrans.core import get_aval
from functrans.core import result_type as _promote
from functrans.tree_util import tree_flatten, tree_unflatten

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """The leaves of ``pytree`` raveled and concatenated into one vector (of their common
    dtype under NumPy's promotion), and ``unravel(vector)``, which rebuilds a pytree of the
    same structure, shapes and dtypes.  Both are differentiable and work under every
    transform (``grad`` of a function of the flat vector, ``vmap`` of ``unravel``).

    >>> import numpy as np, functrans as ft
    >>> from functrans.flatten_util import ravel_pytree
    >>> params = (np.float32(2.0), np.arange(3, dtype=np.float32))
    >>> flat, unravel = ravel_pytree(params)
    >>> flat.dtype, unravel(flat * 2)[1]
    (dtype('float32'), array([0., 2., 4.], dtype=float32))
    >>> ft.grad(lambda v: (unravel(v)[1] ** 2).sum())(flat)
    array([0., 0., 2., 4.], dtype=float32)
    """
    leaves, tree = tree_flatten(pytree)
    avals = [get_aval(x) for x in leaves]
    dtype = _promote(*avals)[0] if avals else np.dtype(np.float64)
    sizes = [a.size for a in avals]
    flat = (lax.concatenate([lax.reshape(lax.convert_element_type(x, dtype), (a.size,))
                             for x, a in zip(leaves, avals)], 0) if leaves
            else np.zeros(0, dtype))

    def unravel(vector):
        shape = tuple(get_aval(vector).shape)
        if shape != (sum(sizes),):
            raise ValueError(f"unravel: expected a vector of shape ({sum(sizes)},) as "
                             f"ravel_pytree made, got shape {shape}")
        parts, start = [], 0
        for aval, size in zip(avals, sizes):
            piece = lax.slice(vector, (start,), (start + size,))
            parts.append(lax.convert_element_type(lax.reshape(piece, aval.shape), aval.dtype))
            start += size
        return tree_unflatten(tree, parts)

    return flat, unravel


def __dir__() -> list[str]:
    return sorted(__all__)
