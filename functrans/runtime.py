"""Where arrays live and how calls run: JAX's ``device_put``, ``device_get``, ``devices``,
``default_backend``, ``block_until_ready``, and the switches ``disable_jit``,
``ensure_compile_time_eval``, ``named_scope``, ``named_call``, ``default_matmul_precision``
and ``clear_caches``.

functrans computes where its inputs are: NumPy arrays on the host ("cpu"), CuPy arrays on
their GPU.  Moving an array is explicit (``device_put``, ``device_get``); everything else
leaves device arrays on their device.
"""
from __future__ import annotations

import functools
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TypeVar

import numpy as np

from functrans import array_types, backend, config, core, jaxpr_transforms, reverse_mode
from functrans.core import Tracer, ensure_compile_time_eval
from functrans.core import ShapedArray
from functrans.primitives import callbacks
from functrans.primitives.jit import clear_all_caches
from functrans.tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["Device", "block_until_ready", "pure_callback", "clear_caches", "default_backend",
           "default_matmul_precision", "device_get", "device_put", "devices", "disable_jit",
           "ensure_compile_time_eval", "io_callback", "named_call", "named_scope"]

F = TypeVar("F", bound=Callable)


class Device:
    """A place arrays live: the host (``platform == "cpu"``) or a CuPy GPU (``"gpu"``),
    numbered by ``id``."""

    def __init__(self, platform: str, id: int = 0):
        self.platform = platform
        self.id = int(id)

    @property
    def device_kind(self) -> str:
        return self.platform

    def __eq__(self, other):
        return (type(other) is Device and other.platform == self.platform
                and other.id == self.id)

    def __hash__(self):
        return hash((self.platform, self.id))

    def __repr__(self):
        return f"{'Cpu' if self.platform == 'cpu' else 'Cuda'}Device(id={self.id})"


_CPU = Device("cpu", 0)


def _cupy():
    """CuPy, if it is installed and sees a GPU; else None."""
    try:
        import cupy  # noqa: PLC0415  (optional dependency, imported when asked for)
        if cupy.cuda.runtime.getDeviceCount() > 0:
            return cupy
    except Exception:  # not installed, or no driver/GPU
        pass
    return None


def default_backend() -> str:
    """The platform arrays made from Python values live on: ``"cpu"`` (NumPy).  CuPy
    arrays stay on their GPU, but functrans never puts values there unasked.

    >>> import functrans as ft
    >>> ft.default_backend()
    'cpu'
    """
    return "cpu"


def devices(backend: str | None = None) -> list[Device]:
    """The devices of ``backend`` (``"cpu"``, the default, or ``"gpu"``/``"cuda"``: the
    GPUs CuPy sees).

    >>> import functrans as ft
    >>> ft.devices()
    [CpuDevice(id=0)]
    """
    name = default_backend() if backend is None else str(backend).lower()
    if name == "cpu":
        return [_CPU]
    if name in ("gpu", "cuda"):
        cupy = _cupy()
        if cupy is None:
            raise RuntimeError(f"devices: backend {backend!r} needs CuPy and a GPU, and "
                               "neither is available here; functrans computes on NumPy "
                               "arrays on the 'cpu' backend")
        return [Device("gpu", i) for i in range(cupy.cuda.runtime.getDeviceCount())]
    raise RuntimeError(f"devices: unknown backend {backend!r}; functrans knows 'cpu' and "
                       "'gpu' (CuPy)")


def _put_leaf(x, device: Device | None):
    if isinstance(x, Tracer):  # under a transform device_put is the identity, as in JAX
        return x
    if device is None:
        if backend.is_device_array(x):
            return x
        return array_types.user_result([np.asarray(x)])[0]
    if device.platform == "cpu":
        host = backend.to_host(x) if backend.is_device_array(x) else np.asarray(x)
        return array_types.user_result([host])[0]
    cupy = _cupy()
    if cupy is None:
        raise RuntimeError(f"device_put: {device!r} needs CuPy and a GPU")
    with cupy.cuda.Device(device.id):
        return cupy.asarray(x)


def device_put(x: Any, device: Device | None = None, *, src: Any = None, donate: bool = False,
               may_alias: bool | None = None) -> Any:
    """The leaves of the pytree ``x`` as arrays on ``device``: with ``device=None``, host
    values become arrays and device arrays stay where they are (no copy); a ``Device``
    from ``devices()`` copies there (``"cpu"``: to the host).  ``src``, ``donate`` and
    ``may_alias`` are accepted for JAX's signature; tracers pass through unchanged.

    >>> import numpy as np, functrans as ft
    >>> ft.device_put({"w": np.array([1.0, 2.0]), "n": 3})
    {'n': array(3), 'w': array([1., 2.])}
    >>> ft.device_put(3.0, ft.devices()[0])
    array(3.)
    """
    del src, donate, may_alias
    if device is not None and not isinstance(device, Device):
        raise TypeError(f"device_put: device must be a Device from functrans.devices() or "
                        f"None, got {device!r}")
    return tree_map(lambda leaf: _put_leaf(leaf, device), x)


def device_get(x: Any) -> Any:
    """The pytree ``x`` with each array copied to a NumPy array on the host (the one call
    that moves device arrays to the host); other leaves as they are.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> type(ft.device_get(fnp.ones(2))) is np.ndarray
    True
    """
    def get(leaf):
        if backend.is_device_array(leaf):
            return backend.to_host(leaf)
        if isinstance(leaf, np.ndarray):
            return leaf.view(np.ndarray) if type(leaf) is not np.ndarray else leaf
        if isinstance(leaf, Tracer):
            return np.asarray(leaf)  # raises the tracer's conversion error
        return leaf
    return tree_map(get, x)


def block_until_ready(x: Any) -> Any:
    """``x``, once the device work computing its arrays is finished (CuPy: the stream is
    synchronised; nothing is copied); NumPy arrays are always ready.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> ft.block_until_ready({"y": fnp.arange(3)})
    {'y': array([0, 1, 2])}
    """
    tree_map(backend.synchronize, x)
    return x


@contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """Inside the block, ``functrans.jit`` calls the functions it wraps directly: they run
    eagerly, so ``print`` shows values and breakpoints stop inside them.

    >>> import functrans as ft
    >>> f = ft.jit(lambda x: print("value", x) or x * 2)
    >>> with ft.disable_jit():
    ...     f(3.0)
    ...
    value 3.0
    6.0
    """
    previous = config.jit_disabled
    config.jit_disabled = bool(disable)
    try:
        yield
    finally:
        config.jit_disabled = previous


@contextmanager
def named_scope(name: str) -> Iterator[None]:
    """A name for the operations of the block, for JAX compatibility: functrans records no
    name stack, so it only checks that ``name`` is a string.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> with ft.named_scope("layer1"):
    ...     y = fnp.sin(0.0)
    ...
    >>> y
    0.0
    """
    if not isinstance(name, str):
        raise TypeError(f"named_scope: name must be a string, got {name!r}")
    yield


def named_call(fun: F, *, name: str | None = None) -> F:
    """``fun`` under the name ``name`` (its ``__name__``; the jaxpr shows its operations
    inline, as JAX's does once compiled).

    >>> import functrans as ft, functrans.numpy as fnp
    >>> f = ft.named_call(lambda x: fnp.sin(x) * 2, name="double_sine")
    >>> f.__name__, f(0.0)
    ('double_sine', 0.0)
    """
    @functools.wraps(fun)
    def named(*args, **kwargs):
        return fun(*args, **kwargs)
    if name is not None:
        named.__name__ = named.__qualname__ = name
    return named  # type: ignore[return-value]  # same signature as fun


_PRECISIONS = {None, "default", "high", "highest", "fastest", "bfloat16", "tensorfloat32",
               "float32", "bfloat16_3x", "ANY_F8_ANY_F8_F32"}


@contextmanager
def default_matmul_precision(new_val: Any = None) -> Iterator[None]:
    """The default precision of matrix products inside the block, for JAX compatibility:
    NumPy and CuPy compute at the operands' precision, so nothing changes.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> with ft.default_matmul_precision("float32"):
    ...     fnp.dot(np.ones(2), np.ones(2))
    ...
    array(2.)
    """
    if new_val not in _PRECISIONS and not hasattr(new_val, "name"):
        raise ValueError(f"default_matmul_precision: unknown precision {new_val!r}; use "
                         "'bfloat16', 'tensorfloat32', 'float32' (or 'default', 'high', "
                         "'highest')")
    yield


def clear_caches() -> None:
    """Forget every cached trace, transformed jaxpr, compiled ``jit`` signature and
    compiled gradient (the next calls trace and compile again).

    >>> import numpy as np, functrans as ft
    >>> f = ft.jit(lambda x: x + 1)
    >>> _ = f(np.ones(2))
    >>> ft.clear_caches()
    >>> f.cache_info().size
    0
    """
    jaxpr_transforms.clear_caches()
    clear_all_caches()
    reverse_mode.clear_caches()


def _result_avals(kind: str, result_shape_dtypes) -> tuple[list, Any]:
    result_leaves, out_tree = tree_flatten(result_shape_dtypes)
    result_avals = []
    for r in result_leaves:
        if not (hasattr(r, "shape") and hasattr(r, "dtype")):
            raise TypeError(f"{kind}: result_shape_dtypes must be a pytree of objects "
                            f"with shape and dtype (ShapeDtypeStruct, arrays), got {r!r}")
        result_avals.append(ShapedArray(tuple(r.shape), r.dtype))
    return result_avals, out_tree


def _flat_callback(kind: str, callback: Callable, in_tree, out_tree) -> Callable:
    name = getattr(callback, "__name__", "callback")

    def flat_callback(*values):
        call_args, call_kwargs = tree_unflatten(in_tree, values)
        results, tree = tree_flatten(callback(*call_args, **call_kwargs))
        if tree != out_tree:
            raise TypeError(f"{kind}: {name} returned a result of structure {tree}, "
                            f"but result_shape_dtypes has structure {out_tree}")
        return results
    return flat_callback


def pure_callback(callback: Callable, result_shape_dtypes: Any, *args: Any,
                  sharding: Any = None, vmap_method: str | None = None, **kwargs: Any) -> Any:
    """Call the Python function ``callback(*args, **kwargs)`` on the values of ``args``
    (pytrees of arrays) when they are computed, also inside ``jit`` (on every run); it must
    return arrays of the shapes and dtypes of ``result_shape_dtypes`` (a pytree of
    ``ShapeDtypeStruct`` or arrays).  The function is taken to be pure: a call whose results
    are not used may be skipped.  Under ``vmap``, ``vmap_method`` says how: "sequential"
    (one call per batch member), "expand_dims" (one call; unbatched arguments get a leading
    axis of size 1), "broadcast_all" (one call; every argument has the batch as its leading
    axis) or "legacy_vectorized" (one call; unbatched arguments as they are); None refuses.
    Derivatives are refused (define them with ``custom_jvp``/``custom_vjp``).

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> def f(x):
    ...     shape = ft.ShapeDtypeStruct(x.shape, x.dtype)
    ...     return ft.pure_callback(np.sinc, shape, x, vmap_method="sequential")
    ...
    >>> ft.jit(f)(np.array([0.0, 0.5]))
    array([1.        , 0.63661977])
    >>> ft.vmap(f)(np.array([[0.0], [1.0]]))
    array([[1.00000000e+00],
           [3.89817183e-17]])
    """
    del sharding
    leaves, in_tree = tree_flatten((args, kwargs))
    result_avals, out_tree = _result_avals("pure_callback", result_shape_dtypes)
    name = getattr(callback, "__name__", "callback")
    outs = callbacks.pure_callback(_flat_callback("pure_callback", callback, in_tree, out_tree),
                                   result_avals, leaves, vmap_method, f"pure_callback({name})")
    return tree_unflatten(out_tree, outs)


def io_callback(callback: Callable, result_shape_dtypes: Any, *args: Any,
                sharding: Any = None, ordered: bool = False, **kwargs: Any) -> Any:
    """Call the Python function ``callback(*args, **kwargs)`` for its effect (writing a
    file, updating a counter) as well as its results, which must be arrays of the shapes
    and dtypes of ``result_shape_dtypes`` (as :func:`pure_callback`'s).  Unlike
    ``pure_callback`` the call is never skipped nor merged with another: it runs each time
    the program runs, inside ``jit`` too, even when its results are unused.  Calls run in
    program order whether or not ``ordered`` is set (functrans runs a program's operations
    one after another).  Under ``vmap`` the callback is called once per batch member, in
    order; with ``ordered=True`` ``vmap`` raises, as JAX's does.  Differentiating through it
    raises ``ValueError``, as in JAX.  ``sharding`` is accepted and ignored.

    >>> import numpy as np, functrans as ft
    >>> from functrans.experimental import io_callback
    >>> log = []
    >>> def record(x):
    ...     log.append(float(x))
    ...     return np.asarray(len(log))
    ...
    >>> @ft.jit
    ... def step(x):
    ...     io_callback(record, ft.ShapeDtypeStruct((), np.int64), x)  # result unused
    ...     return x + 1.0
    ...
    >>> _ = step(1.0); _ = step(2.0)
    >>> log
    [1.0, 2.0]
    """
    del sharding
    leaves, in_tree = tree_flatten((args, kwargs))
    result_avals, out_tree = _result_avals("io_callback", result_shape_dtypes)
    name = getattr(callback, "__name__", "callback")
    outs = callbacks.io_callback(_flat_callback("io_callback", callback, in_tree, out_tree),
                                 result_avals, leaves, ordered, f"io_callback({name})")
    return tree_unflatten(out_tree, outs)


def __dir__() -> list[str]:
    return sorted(__all__)
