"""What makes ``functrans.numpy`` an array API namespace beyond its functions: the
inspection object that ``functrans.numpy.__array_namespace_info__()`` returns, and
``from_dlpack``.  Devices are described in ``_devices``.
"""
from __future__ import annotations

import numpy as np

from functrans import array_types, backend
from functrans.core import Tracer
from functrans.numpy._devices import CPU, check_device, cupy_devices, move_to_device
from functrans.numpy._util import arg

__all__ = ["from_dlpack"]


class ArrayNamespaceInfo:
    """What ``functrans.numpy`` offers, as the array API's inspection object describes it
    (made by ``__array_namespace_info__()``)."""

    def capabilities(self) -> dict:
        """Boolean-mask indexing and functions with data-dependent output shapes (``unique``,
        ``nonzero``) work on concrete arrays but not on traced values under ``jit`` or
        ``vmap`` (their shapes must be known while tracing), so, as in JAX, neither is
        promised.

        >>> import functrans.numpy as fnp
        >>> fnp.__array_namespace_info__().capabilities()["data-dependent shapes"]
        False
        """
        return {"boolean indexing": False, "data-dependent shapes": False,
                "max dimensions": 64}

    def default_device(self) -> str:
        """Where arrays made from shapes alone go: the CPU, as NumPy arrays.

        >>> import functrans.numpy as fnp
        >>> fnp.__array_namespace_info__().default_device()
        'cpu'
        """
        return CPU

    def devices(self) -> list:
        """``'cpu'`` and CuPy's GPUs when CuPy is installed and finds any.

        >>> import functrans.numpy as fnp
        >>> fnp.__array_namespace_info__().devices()[0]
        'cpu'
        """
        return [CPU, *cupy_devices()]

    def default_dtypes(self, *, device=None) -> dict:
        """NumPy's defaults (float64, complex128, int64; int64 for indices), on every device.

        >>> import functrans.numpy as fnp
        >>> fnp.__array_namespace_info__().default_dtypes()["real floating"]
        dtype('float64')
        """
        check_device("default_dtypes", device)
        return {"real floating": np.dtype(np.float64),
                "complex floating": np.dtype(np.complex128),
                "integral": np.dtype(np.int64), "indexing": np.dtype(np.int64)}

    def dtypes(self, *, device=None, kind=None) -> dict:
        """The array API's dtypes by name, all of ``kind`` (a kind name such as ``'real
        floating'``, or a tuple of them) when given.

        >>> import functrans.numpy as fnp
        >>> list(fnp.__array_namespace_info__().dtypes(kind="complex floating"))
        ['complex64', 'complex128']
        """
        check_device("dtypes", device)
        names = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float32", "float64", "complex64", "complex128"]
        table = {name: np.dtype(name) for name in names}
        if kind is None:
            return table
        return {name: dt for name, dt in table.items() if np.isdtype(dt, kind)}


def namespace_info() -> ArrayNamespaceInfo:
    """The array API's inspection object: ``capabilities()``, ``default_device()``,
    ``devices()``, ``default_dtypes()`` and ``dtypes()``.

    >>> import functrans.numpy as fnp
    >>> fnp.__array_namespace_info__().default_dtypes()["integral"]
    dtype('int64')
    """
    return ArrayNamespaceInfo()


# functrans.numpy.__array_namespace_info__ is this function (the standard's name)
namespace_info.__name__ = namespace_info.__qualname__ = "__array_namespace_info__"
namespace_info.__module__ = "functrans.numpy"


def from_dlpack(x, /, *, device=None, copy=None):
    """An array sharing (or, with ``copy=True``, copying) the memory of ``x``, any object
    with ``__dlpack__`` (a NumPy, CuPy or PyTorch array, ...).  A host object becomes a
    NumPy array; a CuPy array stays on its GPU.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.from_dlpack(np.arange(3.0))
    array([0., 1., 2.])
    """
    if isinstance(x, Tracer):
        raise TypeError("from_dlpack: a traced value has no memory to share; use "
                        "functrans.numpy.asarray on it")
    check_device("from_dlpack", device)
    if backend.is_device_array(x) and not isinstance(x, np.ndarray):
        out = backend.array_module(x).from_dlpack(x) if not copy else arg(x).copy()
        return move_to_device("from_dlpack", array_types.user_result(out), device)
    out = np.from_dlpack(x)  # (NumPy 2.0's takes neither copy= nor device=)
    return move_to_device("from_dlpack", array_types.user_result(out.copy() if copy else out), device)
