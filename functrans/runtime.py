"""Where arrays live and how calls run: JAX's ``device_put``, ``device_get``, ``devices``,
``default_backend``, ``block_until_ready``, and the switches ``disable_jit``,
``ensure_compile_time_eval``, ``named_scope``, ``named_call``, ``default_matmul_precision``
and ``clear_caches``, and JAX's options as top-level switches (``debug_nans``,
``enable_x64``, ...: ``Switch``).

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

__all__ = ["Device", "block_until_ready", "pure_callback", "clear_caches", "copy_to_host_async",
           "default_backend", "default_device", "default_matmul_precision", "device_count",
           "device_get", "device_put", "devices", "disable_jit", "ensure_compile_time_eval", "io_callback",
           "host_count", "host_id", "host_ids", "local_device_count", "local_devices",
           "named_call", "named_scope", "print_environment_info", "process_count",
           "process_index", "process_indices", "typeof", "Switch",
           "check_tracer_leaks", "debug_infs", "debug_nans", "default_prng_impl",
           "enable_x64", "log_compiles", "numpy_dtype_promotion", "numpy_rank_promotion"]

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


def _devices_for(caller: str, backend: str | None) -> list[Device]:
    try:
        return devices(backend)
    except RuntimeError as e:
        raise RuntimeError(f"{caller}: {str(e).partition(': ')[2]}") from None


def device_count(backend: str | None = None) -> int:
    """The number of devices of ``backend`` (default ``"cpu"``: 1, the host).  Nothing
    limits a ``pmap``'s mapped axis to it: functrans maps in one process.

    >>> import functrans as ft
    >>> ft.device_count()
    1
    """
    return len(_devices_for("device_count", backend))


def local_device_count(backend: str | None = None) -> int:
    """The number of devices of ``backend`` this process reaches: all of them
    (functrans runs in one process), ``device_count(backend)``.

    >>> import functrans as ft
    >>> ft.local_device_count()
    1
    """
    return len(_devices_for("local_device_count", backend))


def _check_process(caller: str, index) -> None:
    if index is not None and index != 0:
        raise ValueError(f"{caller}: process index {index!r} does not exist; functrans runs "
                         "in one process, whose index is 0")


def local_devices(process_index: int | None = None, backend: str | None = None,
                  host_id: int | None = None) -> list[Device]:
    """The devices of ``backend`` in process ``process_index`` (``host_id`` is its old
    name): functrans runs in one process, index 0, so ``devices(backend)``.

    >>> import functrans as ft
    >>> ft.local_devices()
    [CpuDevice(id=0)]
    """
    _check_process("local_devices", process_index)
    _check_process("local_devices", host_id)
    return _devices_for("local_devices", backend)


def process_index(backend: str | None = None) -> int:
    """The index of this process among the processes of a multi-process run: 0, as
    functrans runs in one process.

    >>> import functrans as ft
    >>> ft.process_index()
    0
    """
    _devices_for("process_index", backend)
    return 0


def process_count(backend: str | None = None) -> int:
    """The number of processes: 1.

    >>> import functrans as ft
    >>> ft.process_count()
    1
    """
    _devices_for("process_count", backend)
    return 1


def process_indices(backend: str | None = None) -> list[int]:
    """The indices of all processes: ``[0]``.

    >>> import functrans as ft
    >>> ft.process_indices()
    [0]
    """
    _devices_for("process_indices", backend)
    return [0]


#: JAX's older names of the process queries
host_id = process_index
host_count = process_count
host_ids = process_indices


class _NoValue:
    def __repr__(self):
        return "<no value>"


_NO_VALUE = _NoValue()


@contextmanager
def default_device(new_val: Any = _NO_VALUE) -> Iterator[None]:
    """A block in which new arrays go to ``new_val`` by default, as JAX's
    ``with jax.default_device(device):``.  functrans makes arrays on the host and computes
    where its inputs are, so only the host (``devices("cpu")[0]`` or ``"cpu"``) and None
    (no change) are accepted; for a GPU, put the inputs there with ``device_put``.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> with ft.default_device(ft.devices("cpu")[0]):
    ...     fnp.ones(2)
    ...
    array([1., 1.])
    """
    value = None if new_val is _NO_VALUE else new_val
    if value is not None and value != _CPU and not (
            isinstance(value, str) and value.lower() == "cpu"):
        raise NotImplementedError(
            f"default_device: functrans makes new arrays on the host and computes where "
            f"its inputs are, so only the host device {_CPU!r} (or 'cpu') can be the "
            f"default, got {value!r}; put the inputs on a GPU with "
            "functrans.device_put(x, device) instead")
    yield


def _version(module: str) -> str:
    from importlib import metadata  # noqa: PLC0415  (only for this report)
    try:
        return metadata.version(module)
    except metadata.PackageNotFoundError:
        return "not installed"


def print_environment_info(return_string: bool = False) -> str | None:
    """Print (or, with ``return_string=True``, return) the versions of functrans, Python,
    NumPy, SciPy, CuPy, dask, numba and llvmlite, and the devices functrans sees: what a
    bug report needs.

    >>> import functrans as ft
    >>> print(ft.print_environment_info(return_string=True))  # doctest: +ELLIPSIS
    functrans: ...
    python: ...
    devices: [CpuDevice(id=0)...]
    """
    import platform  # noqa: PLC0415  (only for this report)
    import sys  # noqa: PLC0415
    try:
        gpus = devices("gpu")
    except RuntimeError:
        gpus = []
    lines = [f"functrans: {_version('functrans')}",
             f"python: {sys.version.splitlines()[0]}",
             f"platform: {platform.platform()}"]
    lines += [f"{name}: {_version(name)}"
              for name in ("numpy", "scipy", "cupy", "dask", "numba", "llvmlite")]
    lines.append(f"devices: {devices('cpu') + gpus}")
    text = "\n".join(lines)
    if return_string:
        return text
    print(text)
    return None


def typeof(x: Any) -> ShapedArray:
    """The abstract value of ``x`` (an array, a Python or NumPy scalar, or a tracer): its
    shape, dtype and weak type, the type transforms trace with.

    >>> import numpy as np, functrans as ft
    >>> ft.typeof(np.ones((2, 3)))
    ShapedArray((2, 3), float64)
    >>> ft.typeof(1.0)
    ShapedArray((), float64, weak_type=True)
    """
    return core.get_aval(x)


def copy_to_host_async(x: Any) -> Any:
    """``x``, unchanged: a hint that its device arrays will be read on the host soon.
    NumPy arrays are on the host already; for CuPy arrays functrans starts no copy
    (``device_get`` copies when the values are needed).

    >>> import numpy as np, functrans as ft
    >>> ft.copy_to_host_async({"w": np.ones(2)})
    {'w': array([1., 1.])}
    """
    return x


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


class _NoDefault:
    def __repr__(self):
        return "<NoDefault>"


_NO_DEFAULT: Any = _NoDefault()


class Switch:
    """One of JAX's options as a top-level object, as ``jax.debug_nans`` is:
    ``switch(new_val)`` is a context manager that sets the option for the block (through
    ``config.update``, so a value functrans cannot honour raises there) and restores it
    after; ``switch.value`` is its value now.  The switches are process-wide, not per
    thread.

    >>> import functrans as ft
    >>> with ft.check_tracer_leaks(True):
    ...     ft.check_tracer_leaks.value
    ...
    True
    >>> ft.check_tracer_leaks.value
    False
    """

    def __init__(self, option: str, implied: Any, doc: str):
        self.option = option
        self._implied = implied  # what switch() without a value sets (True for on/off)
        self.__doc__ = doc

    @property
    def value(self) -> Any:
        """The option's value now."""
        return getattr(config, self.option)

    def __repr__(self):
        return f"<functrans switch {self.option}={self.value!r}>"

    @contextmanager
    def _setting(self, new_val: Any) -> Iterator[None]:
        previous = self.value
        config.update(self.option, new_val)
        try:
            yield
        finally:
            config.update(self.option, previous)

    def __call__(self, new_val: Any = _NO_DEFAULT):
        if new_val is _NO_DEFAULT:
            if self._implied is _NO_DEFAULT:
                raise TypeError(f"{self.option.removeprefix('jax_')}(): pass the value to "
                                "set for the block")
            new_val = self._implied
        return self._setting(new_val)


_SWITCH_PARAMETERS = """
    Parameters
    ----------
    new_val
        The value for the block{implied}.
"""


def _switch(option: str, implied: Any, text: str) -> Switch:
    tail = "" if implied is _NO_DEFAULT else f" ({implied!r} if left out)"
    return Switch(option, implied, text.rstrip() + "\n" + _SWITCH_PARAMETERS.format(
        implied=tail))


debug_nans = _switch("jax_debug_nans", True, """
    ``with debug_nans(True):``: an operation that makes a NaN from operands without one
    raises ``FloatingPointError`` naming it: a primitive evaluated outside transforms, an
    operation of a gradient's backward pass, NumPy's operators on functrans arrays.  A
    ``jit`` function's results are checked, and one with a NaN is run again operation by
    operation to name the one that made it.  ``config.update("jax_debug_nans", True)``
    turns it on for good.  Costs nothing while off.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> with ft.debug_nans(True):  # doctest: +ELLIPSIS
    ...     ft.grad(lambda x: 0.0 * fnp.log(x))(0.0)
    ...
    Traceback (most recent call last):
        ...
    FloatingPointError: invalid value (nan) encountered in mul...
    """)
debug_infs = _switch("jax_debug_infs", True, """
    ``with debug_infs(True):``: an operation that makes an infinity from finite operands
    raises ``FloatingPointError`` naming it, as ``debug_nans`` does for NaNs.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> with ft.debug_infs(True):  # doctest: +ELLIPSIS
    ...     ft.grad(fnp.sqrt)(0.0)
    ...
    Traceback (most recent call last):
        ...
    FloatingPointError: invalid value (inf) encountered in div...
    """)
enable_x64 = _switch("jax_enable_x64", True, """
    ``with enable_x64(True):`` changes nothing: functrans's dtypes are always those of
    JAX's x64 mode (Python floats are float64).  ``enable_x64(False)`` raises
    ``NotImplementedError``: for float32, pass float32 arrays or ``dtype=np.float32``.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> with ft.enable_x64(True):
    ...     fnp.asarray(1.5).dtype
    ...
    dtype('float64')
    """)
check_tracer_leaks = _switch("jax_check_tracer_leaks", True, """
    ``with check_tracer_leaks(True):``: every transform checks as it ends that none of its
    tracers is still referenced, and raises ``UnexpectedTracerError`` if one is (as
    ``checking_leaks()`` does).

    >>> import functrans as ft, functrans.numpy as fnp
    >>> with ft.check_tracer_leaks(True):
    ...     ft.grad(fnp.sin)(0.0)
    ...
    1.0
    """)
log_compiles = _switch("jax_log_compiles", True, """
    ``with log_compiles(True):``: ``jit`` logs each signature it compiles (the function's
    name and its arguments' types) to the logger ``"functrans"`` at level WARNING.

    >>> import logging, numpy as np, functrans as ft
    >>> logging.getLogger("functrans").addHandler(logging.NullHandler())
    >>> with ft.log_compiles(True):
    ...     ft.jit(lambda x: x + 1.0)(np.ones(2))
    ...
    array([2., 2.])
    """)
numpy_rank_promotion = _switch("jax_numpy_rank_promotion", _NO_DEFAULT, """
    ``with numpy_rank_promotion("allow"):``: operands of different ranks broadcast together,
    as NumPy's do: the only mode functrans has; ``"warn"`` and ``"raise"`` raise
    ``NotImplementedError``.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> with ft.numpy_rank_promotion("allow"):
    ...     fnp.add(np.ones(2), np.ones((3, 1))).shape
    ...
    (3, 2)
    """)
numpy_dtype_promotion = _switch("jax_numpy_dtype_promotion", _NO_DEFAULT, """
    ``with numpy_dtype_promotion("standard"):``: the promotion functrans always does
    (arrays promote as NumPy's do; Python scalars and weakly typed arrays take the
    arrays' dtype, as in JAX; docs/array_api.md); ``"strict"`` raises
    ``NotImplementedError``.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> with ft.numpy_dtype_promotion("standard"):
    ...     fnp.add(np.ones(2, np.float32), 1.0).dtype
    ...
    dtype('float32')
    """)
default_prng_impl = _switch("jax_default_prng_impl", _NO_DEFAULT, """
    ``with default_prng_impl("threefry2x32"):``: random keys use threefry2x32, the only
    implementation functrans.random has; another name raises ``NotImplementedError``.

    >>> import functrans as ft
    >>> with ft.default_prng_impl("threefry2x32"):
    ...     ft.random.key_data(ft.random.key(0)).tolist()
    ...
    [0, 0]
    """)

#: the switches' examples, for the doctest finder (which does not look into instances)
__test__ = {name: obj.__doc__ for name, obj in (
    ("debug_nans", debug_nans), ("debug_infs", debug_infs), ("enable_x64", enable_x64),
    ("check_tracer_leaks", check_tracer_leaks), ("log_compiles", log_compiles),
    ("numpy_rank_promotion", numpy_rank_promotion),
    ("numpy_dtype_promotion", numpy_dtype_promotion),
    ("default_prng_impl", default_prng_impl))}


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
