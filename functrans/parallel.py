"""``pmap``: JAX's map over devices, run in this one process.

functrans computes in one Python process on the arrays it is given, so ``pmap(f)`` is
``jit(vmap(f, axis_name=...))``: the mapped axis is batched, not spread over devices, and
the named axis is bound so the collectives of ``functrans.lax`` work as on ``N`` devices.
There is no parallelism, and the mapped axis may be longer than ``device_count()``.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Hashable, Iterable, Sequence, TypeVar, cast

from functrans.api import vmap
from functrans.primitives.jit import jit
from functrans.runtime import Device, devices as _devices_of

__all__ = ["pmap"]

F = TypeVar("F", bound=Callable)


def _usable_devices() -> list[Device]:
    found = list(_devices_of("cpu"))
    try:
        found += _devices_of("gpu")
    except RuntimeError:  # no CuPy or no GPU: only the host
        pass
    return found


def _check_placement(devices, backend) -> None:
    if backend is not None:
        name = str(backend).lower()
        if name not in ("cpu", "gpu", "cuda"):
            raise ValueError(f"pmap: unknown backend {backend!r}; functrans knows 'cpu' and "
                             "'gpu' (CuPy)")
        if name != "cpu":
            try:
                _devices_of(name)
            except RuntimeError:
                raise ValueError(f"pmap: backend {backend!r} needs CuPy and a GPU, and "
                                 "neither is available here; use backend='cpu' or None"
                                 ) from None
    if devices is not None:
        usable = _usable_devices()
        for device in devices:
            if not isinstance(device, Device) or device not in usable:
                raise ValueError(f"pmap: devices must be devices of functrans.devices() "
                                 f"({usable}), got {device!r}")


def pmap(fun: F, axis_name: Hashable | None = None, *,
         in_axes: int | None | Sequence[Any] = 0, out_axes: Any = 0,
         static_broadcasted_argnums: int | Iterable[int] = (),
         devices: Sequence[Device] | None = None, backend: str | None = None,
         axis_size: int | None = None, donate_argnums: int | Iterable[int] = ()) -> F:
    """Map ``fun`` over the leading axis of its arguments with the axis named
    ``axis_name``, so ``functrans.lax`` collectives (``psum``, ``ppermute``,
    ``all_gather``, ...) act across the mapped members, compiled like ``jit`` (traced once
    per argument signature).  It gives the results JAX's ``pmap`` gives on as many devices
    as members, but computes them in this process as one batched program: no parallelism,
    and the mapped axis is not limited by ``device_count()``.

    ``in_axes`` and ``out_axes`` are ``vmap``'s (``None`` entries are broadcast;
    ``in_axes`` has an entry per positional argument, static ones included); the arguments
    in ``static_broadcasted_argnums`` are Python values the trace depends on, passed to
    every member.  ``devices`` and ``backend`` may only name this machine's devices (the
    host, or CuPy's GPUs); they choose nothing: the computation runs where its inputs are.
    ``donate_argnums`` is accepted for JAX's signature: no memory is reused.

    >>> import numpy as np, functrans as ft, functrans.lax as lax
    >>> normalize = ft.pmap(lambda x: x / lax.psum(x, "i"), axis_name="i")
    >>> normalize(np.array([1.0, 3.0]))
    array([0.25, 0.75])
    >>> ft.pmap(lambda x, n: x ** n, static_broadcasted_argnums=1)(np.arange(3.0), 2)
    array([0., 1., 4.])
    """
    if not callable(fun):
        raise TypeError(f"pmap: expected a function, got {fun!r} of type "
                        f"{type(fun).__name__}")
    static: tuple[int, ...] = ((static_broadcasted_argnums,)
                               if isinstance(static_broadcasted_argnums, int)
                               else tuple(static_broadcasted_argnums))
    if any(isinstance(i, bool) or not isinstance(i, int) or i < 0 for i in static):
        raise TypeError(f"pmap: static_broadcasted_argnums must be non-negative ints (the "
                        f"positions of static arguments), got {static_broadcasted_argnums!r}")
    _check_placement(devices, backend)
    del donate_argnums

    def members(*args, **kwargs):  # static arguments are Python values here
        dynamic = [i for i in range(len(args)) if i not in static]
        if isinstance(in_axes, (tuple, list)):
            if len(in_axes) != len(args):
                raise ValueError(f"pmap: in_axes has {len(in_axes)} entries but the "
                                 f"function was called with {len(args)} positional "
                                 "arguments (static ones count too)")
            dynamic_axes: Any = tuple(in_axes[i] for i in dynamic)
        else:
            dynamic_axes = in_axes

        def with_statics(*dynamic_args, **kw):
            full = list(args)
            for i, value in zip(dynamic, dynamic_args):
                full[i] = value
            return fun(*full, **kw)
        mapped = vmap(with_statics, in_axes=dynamic_axes, out_axes=out_axes,
                      axis_name=axis_name, axis_size=axis_size)
        return mapped(*[args[i] for i in dynamic], **kwargs)

    compiled = jit(members, static_argnums=static)

    @functools.wraps(fun)
    def mapped_fun(*args, **kwargs):
        return compiled(*args, **kwargs)
    return cast(F, mapped_fun)  # same parameters; shapes are not part of the types
