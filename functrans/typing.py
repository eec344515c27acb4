"""``functrans.typing``: the type aliases of JAX's ``jax.typing``, for annotating code that
takes arrays and dtypes.

``ArrayLike`` is what the array functions accept: functrans arrays and tracers, NumPy arrays
and scalars, and Python scalars (CuPy arrays are accepted too, but CuPy is optional, so the
alias does not name its type).  ``DTypeLike`` is what ``numpy.dtype`` accepts.

>>> import numpy as np
>>> from functrans.typing import ArrayLike, DTypeLike
>>> def scale(x: ArrayLike, dtype: DTypeLike = np.float32) -> np.ndarray:
...     return np.asarray(x, dtype) * 2
...
>>> scale(1.5)
np.float32(3.0)
"""
from __future__ import annotations

from typing import Any, Protocol, Union

import numpy as np

from functrans.array_types import Array
from functrans.core import Tracer

__all__ = ["ArrayLike", "DTypeLike"]


class _SupportsDType(Protocol):
    @property
    def dtype(self) -> np.dtype: ...


ArrayLike = Union[Array, Tracer, np.ndarray, np.bool_, np.number, bool, int, float, complex]
DTypeLike = Union[str, type[Any], np.dtype, _SupportsDType]


def __dir__() -> list[str]:
    return sorted(__all__)
