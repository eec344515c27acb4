"""What makes ``functrans.numpy`` an array API namespace beyond its functions: the
inspection object ``__array_namespace_info__()``, ``from_dlpack``, and devices.

A device is what an array's ``.device`` reports: ``"cpu"`` for NumPy arrays (as NumPy
says), the device library's own object for its arrays (``cupy.cuda.Device`` for CuPy), and
for a tracer the device of the array behind it (the primal, the batch), or ``"cpu"`` while
``jit`` traces with no array behind it (constants made there are NumPy arrays, moved with
the operands when the compiled function runs).  ``device=`` of the creation functions
takes any of these; the helpers here turn it into the ``like=`` array that
``functrans.backend`` creates next to.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from functrans import backend, core
from functrans.core import Tracer
from functrans.numpy._util import arg

__all__ = ["__array_namespace_info__", "from_dlpack", "device_of", "like_for_device",
           "check_device", "move_to_device", "ArrayNamespaceInfo"]

CPU = "cpu"


def device_of(x) -> Any:
    """The device of an array, a tracer or a scalar (see the module's docstring)."""
    if isinstance(x, Tracer):
        witness = x.device_witness()
        return CPU if witness is None else device_of(witness)
    if isinstance(x, np.ndarray) or not backend.is_device_array(x):
        return CPU
    device = getattr(x, "device", None)
    return CPU if device is None else device


def _is_cpu(device) -> bool:
    return device is None or (isinstance(device, str) and device == CPU)


def _cupy_devices() -> list:
    """CuPy's GPUs, when CuPy is installed and finds any (an empty list otherwise)."""
    try:
        import cupy
        return [cupy.cuda.Device(i) for i in range(cupy.cuda.runtime.getDeviceCount())]
    except Exception:  # no CuPy, no driver, no GPU: no device besides the CPU
        return []


def check_device(name: str, device) -> None:
    """Refuse a ``device=`` that no array library here knows, naming the function."""
    if _is_cpu(device) or (not isinstance(device, str)
                           and type(device).__module__.split(".")[0] == "cupy"):
        return
    raise ValueError(f"{name}: device={device!r} is not a device functrans knows: pass 'cpu' "
                     "(NumPy), a CuPy device (x.device of a CuPy array), or an array's "
                     ".device")


def like_for_device(name: str, device, like=None):
    """The ``like=`` array for creating on ``device`` (None for the CPU, so NumPy);
    ``like`` wins when no device is given."""
    check_device(name, device)
    if device is None:
        return like
    if _is_cpu(device):
        return None
    import cupy
    with device:
        return cupy.empty((0,))


def move_to_device(name: str, x, device):
    """``x`` on ``device`` (itself when it is there already).  A tracer cannot move: its
    device is that of the array behind it, so only its own device is accepted."""
    check_device(name, device)
    if device is None or _same_device(device_of(x), device):
        return x
    if isinstance(x, Tracer):
        raise ValueError(f"{name}: a traced value ({x.aval.str_short()}) on {device_of(x)!r} "
                         f"cannot be moved to {device!r} inside a transform; move the inputs "
                         "before transforming")
    if _is_cpu(device):
        return core.user_result(backend.to_host(x))
    import cupy
    with device:
        return core.user_result(cupy.asarray(x))


def _same_device(a, b) -> bool:
    return (_is_cpu(a) and _is_cpu(b)) or a == b


class ArrayNamespaceInfo:
    """What ``functrans.numpy`` offers, as the array API's inspection object describes it
    (made by ``__array_namespace_info__()``)."""

    __module__ = "functrans.numpy"

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
        return [CPU, *_cupy_devices()]

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


def __array_namespace_info__() -> ArrayNamespaceInfo:  # noqa: N807 (the standard's name)
    """The array API's inspection object: ``capabilities()``, ``default_device()``,
    ``devices()``, ``default_dtypes()`` and ``dtypes()``.

    >>> import functrans.numpy as fnp
    >>> fnp.__array_namespace_info__().default_dtypes()["integral"]
    dtype('int64')
    """
    return ArrayNamespaceInfo()


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
        return move_to_device("from_dlpack", core.user_result(out), device)
    kwargs = {} if copy is None else {"copy": copy}
    if _is_cpu(device):
        kwargs["device"] = CPU
    return core.user_result(np.from_dlpack(x, **kwargs))
