"""A NumPy-backed stand-in for CuPy, so that CI (which has no GPU) checks that functrans keeps
device arrays on their device.

It behaves like CuPy where functrans could go wrong:

* its arrays (``ndarray``) are not NumPy arrays: converting one implicitly to NumPy
  (``np.asarray(x)``, a NumPy function or ufunc applied to it, mixing it with a NumPy array of
  rank >= 1 in an operator or a stand-in function) raises ``TypeError``; NumPy scalars, 0-d
  NumPy arrays and Python scalars mix freely, as in CuPy;
* its functions are NumPy's of the same name, taking and returning stand-in arrays;
  reductions give 0-d arrays, not scalars; ufuncs are plain functions without ``.at``,
  ``.accumulate``, ``.reduce`` or ``.outer``;
* arrays have no ``flags.writeable`` (writes always succeed, views included) and a view's
  ``base`` is the array that owns the memory;
* every copy between host and device is counted: ``asarray``/``array`` of host data is a
  host-to-device copy; ``get()``, ``asnumpy()``, ``float()``/``int()``/``bool()``/
  ``complex()``, ``item()`` and ``tolist()`` are device-to-host synchronisations.

>>> import numpy as np, cupy_standin as standin
>>> with standin.transfers() as t:
...     x = standin.asarray(np.arange(3.0))
...     y = standin.sin(x) * 2.0 + x
...     total = float(standin.sum(y))
>>> (t.h2d, t.d2h)
(1, 1)
>>> np.asarray(x)
Traceback (most recent call last):
...
TypeError: Implicit conversion of a stand-in device array to a NumPy array is not allowed; call .get() or standin.asnumpy() to copy it explicitly

Importing the module registers ``ndarray`` with ``functrans.backend``.
"""
from __future__ import annotations

import builtins
import contextlib
import sys
import types
from typing import Any, Iterator

import numpy as np
import scipy.linalg
import scipy.special

from functrans import backend

__all__ = ["ndarray", "Transfers", "transfers", "totals", "array_protocols", "asarray",
           "array", "asnumpy", "scatter_add", "random", "linalg", "special", "scipy", "LIBRARY"]

_IMPLICIT = ("Implicit conversion of a stand-in device array to a NumPy array is not allowed; "
             "call .get() or standin.asnumpy() to copy it explicitly")

# ------------------------------------------------------------------------------------------
# Transfer counters
# ------------------------------------------------------------------------------------------


class Transfers:
    """Counts of host-to-device copies (``h2d``) and device-to-host synchronisations
    (``d2h``), each with a list of what caused it (``h2d_log``, ``d2h_log``)."""

    def __init__(self):
        self.h2d = self.d2h = 0
        self.h2d_log: list[str] = []
        self.d2h_log: list[str] = []

    def __repr__(self):
        return f"Transfers(h2d={self.h2d}, d2h={self.d2h})"


_TOTALS = Transfers()
_active: list[Transfers] = [_TOTALS]


def totals() -> Transfers:
    """The counts since the module was imported."""
    return _TOTALS


@contextlib.contextmanager
def transfers() -> Iterator[Transfers]:
    """Counts the transfers made inside the ``with`` block."""
    counter = Transfers()
    _active.append(counter)
    try:
        yield counter
    finally:
        _active.remove(counter)


def _caller() -> str:
    """Where in functrans (outside backend.py) the transfer was asked for, innermost first."""
    frame, sites = sys._getframe(2), []
    while frame is not None and len(sites) < 3:
        path = frame.f_code.co_filename.replace("\\", "/")
        if "/functrans/" in path and not path.endswith("/backend.py"):
            sites.append(f"{path.rsplit('/functrans/', 1)[1]}:{frame.f_lineno} "
                         f"{frame.f_code.co_name}")
        frame = frame.f_back
    return " < ".join(sites) or "outside functrans"


def _record(direction: str, what: str) -> None:
    what = f"{what} at {_caller()}"
    for counter in _active:
        setattr(counter, direction, getattr(counter, direction) + 1)
        getattr(counter, direction + "_log").append(what)


# ------------------------------------------------------------------------------------------
# NumPy's dispatch protocols (what dask relies on for CuPy chunks)
# ------------------------------------------------------------------------------------------

_PROTOCOLS = False


@contextlib.contextmanager
def array_protocols() -> Iterator[None]:
    """Inside the block, NumPy functions and ufuncs applied to stand-in arrays run on the
    device and return stand-in arrays, as CuPy's ``__array_function__`` and
    ``__array_ufunc__`` do: dask applies ``np.sin``, ``np.matmul``, ``np.concatenate``... to
    its chunks and relies on them to reach CuPy.  Outside it (the default) they raise, so
    that functrans's own code is checked to call its array module.  Implicit conversion to
    NumPy (``np.asarray(x)``) and NumPy arrays of rank >= 1 mixed in raise either way."""
    global _PROTOCOLS
    previous, _PROTOCOLS = _PROTOCOLS, True
    try:
        yield
    finally:
        _PROTOCOLS = previous


# ------------------------------------------------------------------------------------------
# Moving values between NumPy and the stand-in
# ------------------------------------------------------------------------------------------


#: the functions to which CuPy passes 0-d NumPy arrays as their values
_ZERO_D_ACCEPTED = frozenset({"less", "less_equal", "greater", "greater_equal", "equal",
                              "not_equal"} | {f"operator __{op}__" for op in (
                                  "lt", "le", "gt", "ge", "eq", "ne")})


def _unwrap(x, where: str):
    """``x`` with stand-in arrays replaced by their NumPy data, looking into lists and
    tuples; a NumPy array raises as in CuPy (one of rank 0 too, except in comparisons)."""
    if isinstance(x, ndarray):
        return x._data
    if isinstance(x, np.ndarray) and (x.ndim > 0 or where not in _ZERO_D_ACCEPTED):
        # 0-d too: CuPy takes NumPy scalars, not 0-d arrays (but in comparisons, whose 0-d
        # arrays it reads with .item(), a workaround of numpy/numpy#12142)
        raise TypeError(f"{where}: unsupported argument of type numpy.ndarray (shape "
                        f"{x.shape}); stand-in functions take stand-in arrays, NumPy scalars and "
                        "Python scalars (copy with standin.asarray first)")
    if type(x) in (list, tuple):
        return type(x)(_unwrap(v, where) for v in x)
    return x


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _wrap(x, inputs=()):
    """Stand-in arrays for the NumPy arrays and scalars in result ``x``.  A result that views
    the memory of a stand-in input gets that input's owner as its ``base``; a result that is
    an input's own data is that input."""
    if isinstance(x, np.ndarray):
        for a in inputs:
            if x is a._data:
                return a
        owner = None
        if x.base is not None:
            root = _root(x)
            for a in inputs:
                if _root(a._data) is root:
                    owner = a if a._owner is None else a._owner
                    break
        return ndarray._new(x, owner)
    if isinstance(x, np.generic) and not isinstance(x, (np.str_, np.bytes_, np.void)):
        return ndarray._new(np.asarray(x), None)
    if type(x) in (list, tuple):
        return type(x)(_wrap(v, inputs) for v in x)
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # NumPy's named results (EighResult)
        return type(x)(*(_wrap(v, inputs) for v in x))
    return x


def _standins(args, kwargs) -> list:
    found = []

    def visit(v):
        if isinstance(v, ndarray):
            found.append(v)
        elif type(v) in (list, tuple):
            for w in v:
                visit(w)
    for v in args:
        visit(v)
    for v in kwargs.values():
        visit(v)
    return found


def _call(fun, name: str, args, kwargs):
    inputs = _standins(args, kwargs)
    out = fun(*_unwrap(args, name), **{k: _unwrap(v, name) for k, v in kwargs.items()})
    return _wrap(out, inputs)


def _contains_host_data(x) -> bool:
    if isinstance(x, ndarray):
        return False
    if type(x) in (list, tuple):
        return any(_contains_host_data(v) for v in x)
    return True


def asarray(a, dtype=None, order=None):
    """``a`` on the device; host data (NumPy arrays, scalars, lists) is copied there once."""
    if isinstance(a, ndarray):
        return a if dtype is None or np.dtype(dtype) == a.dtype else a.astype(dtype)
    if _contains_host_data(a):
        _record("h2d", f"asarray of {type(a).__name__}")
    data = np.array(_unwrap_any(a), dtype=dtype, order=order or "K", copy=True)
    return ndarray._new(data, None)


def array(obj, dtype=None, copy=True, order="K", ndmin=0):
    """A new device array from ``obj``; host data is copied to the device."""
    if isinstance(obj, ndarray):
        data = np.array(obj._data, dtype=dtype, copy=copy, order=order, ndmin=ndmin)
        return _wrap(data, [obj])
    if _contains_host_data(obj):
        _record("h2d", f"array of {type(obj).__name__}")
    return ndarray._new(np.array(_unwrap_any(obj), dtype=dtype, order=order, ndmin=ndmin),
                        None)


def _unwrap_any(x):
    """Like ``_unwrap`` but accepting host arrays (for the explicit copies to the device)."""
    if isinstance(x, ndarray):
        return x._data
    if type(x) in (list, tuple):
        return type(x)(_unwrap_any(v) for v in x)
    return x


def asnumpy(a) -> np.ndarray:
    """An explicit copy of ``a`` to the host (NumPy values pass through)."""
    if isinstance(a, ndarray):
        return a.get()
    return np.asarray(a)


def scatter_add(target: "ndarray", index, updates) -> None:
    """``target[index] += updates`` in place, repeated indices accumulating."""
    if not isinstance(target, ndarray):
        raise TypeError(f"scatter_add: the target must be a stand-in array, got "
                        f"{type(target).__name__}")
    np.add.at(target._data, _unwrap(index, "scatter_add"), _unwrap(updates, "scatter_add"))


# ------------------------------------------------------------------------------------------
# The array type
# ------------------------------------------------------------------------------------------


class _Flags:
    """CuPy's flags: contiguity and ownership, and no ``writeable``."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata")

    def __init__(self, data: np.ndarray, owner):
        self.c_contiguous = data.flags.c_contiguous
        self.f_contiguous = data.flags.f_contiguous
        self.owndata = owner is None


# NumPy array attributes that CuPy arrays lack or that would reach host memory directly.
_HIDDEN = frozenset({"flags", "ctypes", "data", "tofile", "dump", "dumps", "tobytes",
                     "setflags", "itemset", "newbyteorder", "byteswap", "getfield", "setfield",
                     "base", "to_device", "device"})
_SYNCING = frozenset({"item", "tolist"})


class ndarray:
    """A device array of the stand-in: NumPy data behind an interface like ``cupy.ndarray``."""

    # Not "cupy...": functrans must find this type through its registry, not by its module.
    __module__ = "standin"
    __slots__ = ("_data", "_owner", "__weakref__")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, shape, dtype=float):
        self._data = np.empty(shape, dtype)
        self._owner = None

    @classmethod
    def _new(cls, data: np.ndarray, owner) -> "ndarray":
        if data.dtype.kind not in "biufc":
            raise ValueError(f"Unsupported dtype {data.dtype} (CuPy arrays hold booleans and "
                             "numbers only)")
        if not data.flags.writeable:
            # CuPy views (broadcasts included) are writeable; NumPy marks broadcasts read-only.
            try:
                data.flags.writeable = True
            except ValueError:
                data = data.copy()
                owner = None
        x = object.__new__(cls)
        x._data, x._owner = data, owner
        return x

    # -- what CuPy refuses ---------------------------------------------------------------

    def __array__(self, dtype=None, copy=None):
        raise TypeError(_IMPLICIT)

    def __array_function__(self, func, types_, args, kwargs):
        if func in _METADATA_FUNCTIONS:  # CuPy answers these without touching the data
            return func(*_unwrap(args, func.__name__), **kwargs)
        if _PROTOCOLS:
            return _call(func, func.__name__, args, kwargs)
        raise TypeError(f"numpy.{func.__name__} was applied to a stand-in device array; "
                        f"{_IMPLICIT}. Use the array's own module (functrans.backend."
                        "array_module) instead")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        # `np.float64(2) * x` arrives here as np.multiply(np.float64(2), x): NumPy scalars
        # and 0-d arrays mix with device arrays in CuPy, so a two-operand call with one of
        # them is computed here.  Any other NumPy ufunc applied to a device array raises.
        others = [v for v in inputs if not isinstance(v, ndarray)]
        if (method == "__call__" and not kwargs and len(inputs) == 2 and others and all(
                isinstance(v, np.generic) or (isinstance(v, np.ndarray) and v.ndim == 0)
                for v in others)):
            return _call(ufunc, ufunc.__name__, inputs, {})
        if _PROTOCOLS and method in ("__call__", "reduce") and "out" not in kwargs:
            return _call(getattr(ufunc, method), ufunc.__name__, inputs, kwargs)
        raise TypeError(f"numpy.{ufunc.__name__}{'' if method == '__call__' else '.' + method}"
                        f" was applied to a stand-in device array; {_IMPLICIT}")

    # -- attributes ----------------------------------------------------------------------

    @property
    def base(self):
        """The array owning the memory of this view, or None if this array owns it."""
        return self._owner

    @property
    def flags(self) -> _Flags:
        return _Flags(self._data, self._owner)

    def __getattr__(self, name: str):
        if name.startswith("__") or name in _HIDDEN:
            raise AttributeError(f"stand-in arrays have no attribute {name!r}")
        value = getattr(self._data, name)
        if name in _SYNCING:
            def syncing(*args, **kwargs):
                _record("d2h", f"ndarray.{name}")
                return value(*args, **kwargs)
            return syncing
        if callable(value):
            def method(*args, **kwargs):
                return _call_method(self, value, name, args, kwargs)
            method.__name__ = name
            return method
        return _wrap(value, [self])

    def view(self, dtype=None, type=None):  # noqa: A002 (CuPy's and NumPy's keyword)
        """A view of the same device memory, as another dtype and/or as a subclass of this
        array type (CuPy's ``view(dtype, type)``)."""
        cls = builtins.type(self) if type is None else type
        if not (isinstance(cls, builtins.type) and issubclass(cls, ndarray)):
            raise ValueError("Type must be a sub-type of ndarray type")
        out = object.__new__(cls)
        out._data = self._data if dtype is None else self._data.view(dtype)
        out._owner = self if self._owner is None else self._owner
        return out

    def get(self) -> np.ndarray:
        """An explicit copy of this array to the host."""
        _record("d2h", "ndarray.get")
        return self._data.copy()

    def __repr__(self):
        return "standin." + repr(self._data).replace("\n", "\n        ")

    def __str__(self):
        return str(self._data)

    # -- implicit synchronisations -------------------------------------------------------

    def _scalar(self, convert, what: str):
        _record("d2h", what)
        return convert(self._data)

    def __bool__(self):
        return self._scalar(bool, "bool()")

    def __float__(self):
        return self._scalar(float, "float()")

    def __int__(self):
        return self._scalar(int, "int()")

    def __complex__(self):
        return self._scalar(complex, "complex()")

    def __index__(self):
        return self._scalar(lambda d: d.__index__(), "index")

    # -- sequence protocol and indexing --------------------------------------------------

    def __len__(self):
        return len(self._data)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self._data)))

    def __getitem__(self, index):
        return _wrap(self._data[_device_index(index)], [self])

    def __setitem__(self, index, value):
        if isinstance(value, np.ndarray) and value.ndim > 0:
            _record("h2d", "__setitem__ of a numpy.ndarray value")
        elif type(value) is list:
            _record("h2d", "__setitem__ of a list value")
        self._data[_device_index(index)] = _unwrap_any(value)


def _device_index(index):
    """An index for the NumPy data; host index arrays and lists are copied to the device
    (and counted), as CuPy does."""
    if isinstance(index, ndarray):
        return index._data
    if type(index) is tuple:
        return tuple(_device_index(i) for i in index)
    if isinstance(index, np.ndarray) and index.ndim > 0:
        _record("h2d", "index of a numpy.ndarray")
    elif type(index) is list:
        _record("h2d", "index of a list")
    return index


def _call_method(self: ndarray, method, name: str, args, kwargs):
    return _wrap(method(*_unwrap(args, f"ndarray.{name}"),
                        **{k: _unwrap(v, f"ndarray.{name}") for k, v in kwargs.items()}),
                 [self] + _standins(args, kwargs))


def _operator(name: str, inplace: bool = False):
    numpy_op = getattr(np.ndarray, name)

    def op(self, *others):
        if not all(isinstance(o, ndarray) or isinstance(o, (int, float, complex, np.generic,
                                                         np.ndarray)) for o in others):
            return NotImplemented  # another array type (a tracer, say) takes over, as in CuPy
        try:
            operands = _unwrap(others, f"operator {name}")
        except TypeError as e:
            raise TypeError(f"{e}; mixing a stand-in array with a NumPy array is not allowed")\
                from None
        out = numpy_op(self._data, *operands)
        if out is NotImplemented:
            return out
        if inplace:
            return self
        return _wrap(out, [self] + _standins(others, {}))

    op.__name__ = name
    return op


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
              "xor", "lshift", "rshift", "divmod"):
    setattr(ndarray, f"__{_name}__", _operator(f"__{_name}__"))
    setattr(ndarray, f"__r{_name}__", _operator(f"__r{_name}__"))
    if _name != "divmod":
        setattr(ndarray, f"__i{_name}__", _operator(f"__i{_name}__", inplace=True))
for _name in ("eq", "ne", "lt", "le", "gt", "ge", "neg", "pos", "abs", "invert"):
    setattr(ndarray, f"__{_name}__", _operator(f"__{_name}__"))
del _name


# ------------------------------------------------------------------------------------------
# Module functions: NumPy's, on stand-in arrays
# ------------------------------------------------------------------------------------------

_METADATA_FUNCTIONS = frozenset({np.shape, np.ndim, np.size, np.result_type, np.iscomplexobj,
                                 np.isrealobj})

#: functions whose answer CuPy gives as a 0-d device array where some NumPy versions give a
#: Python number (``count_nonzero`` before NumPy 2.x): reading it is a synchronisation
_DEVICE_SCALAR_RESULTS = frozenset({"count_nonzero"})


def _function(fun, name: str):
    def device_function(*args, **kwargs):
        out = _call(fun, name, args, kwargs)
        if name in _DEVICE_SCALAR_RESULTS and type(out) in (int, float, bool):
            return ndarray._new(np.asarray(out), None)
        return out
    device_function.__name__ = device_function.__qualname__ = name
    device_function.__doc__ = f"numpy.{name} on stand-in arrays."
    return device_function


#: What NumPy (or SciPy) has and CuPy (cupyx.scipy.special, CuPy 14.2) has not: the
#: stand-in lacks it too, so that code calling it on device arrays fails here as on a GPU
_CUPY_LACKS = frozenset({"geomspace"})
_CUPYX_SPECIAL_LACKS = frozenset({"dawsn", "fresnel", "hyp1f1", "hyp2f1", "jv", "owens_t",
                                  "spence", "wofz"})
#: the LAPACK drivers functrans calls through scipy.linalg that cupyx.scipy.linalg lacks
_CUPYX_LINALG_LACKS = frozenset({"schur", "hessenberg", "solve_sylvester"})


class _Namespace(types.ModuleType):
    """A NumPy submodule (``linalg``, ``fft``, ...) on stand-in arrays, without the names
    in ``lacks`` (those CuPy's counterpart lacks)."""

    def __init__(self, name: str, numpy_module, lacks: frozenset = frozenset()):
        super().__init__(name)
        self._numpy_module = numpy_module
        self._lacks = lacks

    def __getattr__(self, name: str):
        if name.startswith("__") or name in self._lacks:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        return _translate(getattr(self._numpy_module, name), f"{self.__name__}.{name}")


def _translate(value, name: str):
    if isinstance(value, types.ModuleType):
        return _Namespace(name, value)
    if isinstance(value, type) or not callable(value):
        return value  # dtypes (``standin.float64`` is NumPy's, as in CuPy) and constants
    return _function(value, name)


class _Generator:
    """A random generator that draws on the device (no copies)."""

    def __init__(self, seed):
        self._rng = np.random.default_rng(seed)

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return _function(getattr(self._rng, name), f"Generator.{name}")


class _Random(_Namespace):
    def default_rng(self, seed=None) -> _Generator:
        """A generator whose draws are stand-in arrays."""
        return _Generator(seed)


random = _Random("standin.random", np.random)
linalg = _Namespace("standin.linalg", np.linalg)
special = _Namespace("standin.special", scipy.special,  # as cupyx.scipy.special
                     _CUPYX_SPECIAL_LACKS)


class _SciPy(_Namespace):
    """``standin.scipy``, as ``cupyx.scipy``: its ``linalg`` lacks what CuPy's lacks."""

    def __getattr__(self, name: str):
        if name == "linalg":
            return _Namespace("standin.scipy.linalg", self._numpy_module.linalg,
                              _CUPYX_LINALG_LACKS)
        return super().__getattr__(name)


scipy = _SciPy("standin.scipy", scipy)  # as cupyx.scipy (linalg.solve_triangular)


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    if name in _CUPY_LACKS:
        raise AttributeError(f"module 'cupy_standin' has no attribute {name!r} (nor has CuPy)")
    try:
        value = getattr(np, name)
    except AttributeError:
        raise AttributeError(f"module 'cupy_standin' has no attribute {name!r}") from None
    value = _translate(value, name)
    if not hasattr(builtins, name):  # cached (next time this function is not called), but
        globals()[name] = value     # never over a builtin (`all`, `abs`) this module uses
    return value


LIBRARY = backend.ArrayLibrary(sys.modules[__name__], scatter_add, asnumpy, random.default_rng,
                               has_ufunc_methods=False)
backend.register_array_library(ndarray, LIBRARY)
