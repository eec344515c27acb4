"""Devices, as the array API sees them, for the families of ``functrans.numpy``: where an
array or tracer lives, and ``device=`` turned into what ``functrans.backend`` creates
next to.  Public inside the package; nothing here is part of ``functrans.numpy``'s API.

A device is what an array's ``.device`` reports: ``"cpu"`` for NumPy arrays (as NumPy
says), the device library's own object for its arrays (``cupy.cuda.Device`` for CuPy), and
for a tracer the device of the array behind it (the primal, the batch), or ``"cpu"`` while
``jit`` traces with no array behind it (constants made there are NumPy arrays, moved with
the operands when the compiled function runs).  ``device=`` of the creation functions
takes any of these; the helpers here turn it into the ``like=`` array that
``functrans.backend`` creates next to.
"""
from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from functrans import array_types, backend
from functrans.core import Tracer

__all__ = ["CPU", "device_of", "like_for_device", "check_device", "move_to_device",
           "device_context", "is_cpu", "cupy_devices"]

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


def is_cpu(device) -> bool:
    # "cpu", or a device object of the host (functrans.devices()'s, JAX's: platform "cpu")
    return device is None or (isinstance(device, str) and device == CPU) or (
        getattr(device, "platform", None) == CPU)


def cupy_devices() -> list:
    """CuPy's GPUs, when CuPy is installed and finds any (an empty list otherwise)."""
    try:
        import cupy
        return [cupy.cuda.Device(i) for i in range(cupy.cuda.runtime.getDeviceCount())]
    except Exception:  # no CuPy, no driver, no GPU: no device besides the CPU
        return []


def check_device(name: str, device) -> None:
    """Refuse a ``device=`` that no array library here knows, naming the function."""
    if is_cpu(device) or (not isinstance(device, str)
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
    if is_cpu(device):
        return None
    import cupy
    with device:
        return cupy.empty((0,))


def device_context(device):
    """The context in which a device library creates arrays on ``device`` (CuPy's device
    objects are such contexts; nothing to enter for the CPU)."""
    return contextlib.nullcontext() if is_cpu(device) else device


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
    if is_cpu(device):
        return array_types.user_result(backend.to_host(x))
    import cupy
    with device:
        return array_types.user_result(cupy.asarray(x))


def _same_device(a, b) -> bool:
    return (is_cpu(a) and is_cpu(b)) or a == b


