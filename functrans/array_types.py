"""The array types functrans hands out: ``Array`` for NumPy arrays and, for a device
library whose arrays support subclass views (CuPy), its ``DeviceArray`` subclass.

They are the same arrays with JAX's ``x.at[index]`` updates and indices that may be
tracers (``result_type_attributes``, filled by ``functrans.numpy``).  Interpreters and
rules compute on plain backend arrays; these types are applied once, where a result is
handed to the user: by the bottom interpreter for an operation the user's code calls
outside transforms (``core.EvalTrace``), and by the public transforms for what they return
(``hand_out``).  A backend whose arrays cannot be viewed as a subclass (``view(type=...)``),
or whose arrays are lazy graphs (dask), hands out its own arrays unchanged.

They are immutable values, as JAX's arrays are: item assignment and the other methods that
write in place refuse, and in-place operators (``x += y``) return new arrays that the name
is rebound to.  Handed-out arrays that may view memory the caller also holds (``asarray``
of a NumPy array, the results of transforms) are moreover marked read-only, so that NumPy's
``out=`` cannot write through them; the results of single operations outside transforms
are fresh memory nobody else holds, and skip that flag (setting it costs about a tenth of
the operation, docs/array_api.md).  ``isinstance(x, Array)`` is true for tracers too, as
``isinstance(tracer, jax.Array)`` is, and for the device subclass.

Arrays made from Python scalars alone are weakly typed, as JAX's are: ``WeakArray`` (and
a weak subclass of each device type, ``weak_result``), whose abstract value is weak and
whose operators compute with functrans.numpy, so that they take the dtype of the arrays
they meet (``core.evaluate_weak``).
"""
from __future__ import annotations

import abc
from typing import Any, Callable

import numpy as np

from functrans import backend

__all__ = ["Array", "WeakArray", "WEAK_ARRAY_TYPES", "result_type_attributes",
           "device_result_type", "user_result", "weak_result", "strip_weak", "hand_out",
           "IN_PLACE_OPERATORS"]

_PY_SCALARS = frozenset({int, float, complex, bool})


class Array(np.ndarray, metaclass=abc.ABCMeta):
    """The arrays functrans hands out: NumPy arrays (repr included) that are immutable
    values as JAX's are, with JAX's ``x.at[index]`` updates installed by functrans.numpy.

    ``isinstance(x, Array)`` holds for these, for their device counterpart and for the
    tracers that stand for arrays inside transforms (registered as virtual subclasses),
    not for the NumPy arrays a user makes: ``isinstance(np.ones(3), Array)`` is false, as
    for ``jax.Array``.  functrans makes them; build one with ``functrans.numpy.asarray``.

    Attributes
    ----------
    at
        JAX's indexed updates, each returning a new array: ``x.at[i].set(v)``, ``.add``,
        ``.multiply``, ``.divide``, ``.power``, ``.min``, ``.max``, ``.apply`` and ``.get``.
    shape, dtype, ndim, size, T, mT, device
        As for NumPy arrays (``mT``: the matrix transpose of the last two axes).
    """

    __slots__ = ()

    def __repr__(self):
        return repr(self.view(type=np.ndarray))

    def __array_function__(self, func, types, args, kwargs):
        # NumPy's functions (np.sort, np.linspace, np.concatenate, ...) see plain ndarrays
        # and give NumPy's results, as they do for JAX's arrays: their code may write into
        # the arrays it makes from its inputs, which an Array refuses
        for t in types:
            if not issubclass(t, np.ndarray):  # a tracer's own dispatch takes it
                return NotImplemented
        return func._implementation(*_plain(args), **_plain(kwargs))

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        # DLPack before 1.0 cannot mark memory read-only, and NumPy refuses to export
        # read-only arrays through it: such a consumer gets a copy (unless copy=False)
        plain = self.view(np.ndarray)
        if (not plain.flags.writeable and copy is None
                and (max_version is None or max_version[0] < 1)):
            plain, copy = plain.copy(), None
        # NumPy before 2.1 takes only ``stream``: pass the newer keywords only when given
        extra = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device),
                                   ("copy", copy)) if v is not None}
        return plain.__dlpack__(stream=stream, **extra)

    def __array_wrap__(self, arr, context=None, return_scalar=False):
        # NumPy's own operations on an Array give Arrays, 0-d ones included (x.sum()), as
        # JAX's give 0-d arrays where NumPy gives scalars
        return arr.view(type=Array) if type(arr) is np.ndarray else arr


class WeakArray(Array):
    """A weakly typed ``Array``, as JAX's arrays made from Python scalars alone are:
    ``asarray(2.0)``, ``full(3, 0.5)``, ``where(mask, 1.0, 0.0)``, ``broadcast_to(1.0, s)``
    and what operations on such arrays alone give.  Its dtype is the one NumPy gives the
    scalars (float64, int64, complex128), but like a Python scalar it takes the type of the
    arrays it meets: ``x_f32 * where(mask, 1.0, 0.0)`` is float32, as under ``jit`` and
    in JAX.  ``x.weak_type`` is True.  Its operators, methods and NumPy's ufuncs compute
    with functrans.numpy (``weak_type_attributes``); NumPy's other functions see a plain
    array."""

    __slots__ = ()
    weak_type = True

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        fn = WEAK_UFUNCS.get(ufunc) if method == "__call__" and not kwargs else None
        if fn is not None:
            return fn(*inputs)
        return getattr(ufunc, method)(*_plain(inputs), **_plain(kwargs))


#: the weakly typed array types: ``WeakArray`` and the device ones (``weak_result``)
WEAK_ARRAY_TYPES: set[type] = {WeakArray}
#: device array type -> its weakly typed subclass
_weak_device_types: dict[type, type] = {}
#: What the weakly typed array types have instead of their bases' (filled by
#: functrans.numpy): operators and methods that compute with functrans.numpy, so that they
#: promote weakly (NumPy's and CuPy's own would promote them as strong types).
weak_type_attributes: dict[str, Any] = {}
#: NumPy ufunc -> the functrans.numpy function computing it (filled by functrans.numpy)
WEAK_UFUNCS: dict = {}


def _plain(args):
    """``args`` (a tuple, list or dict of arguments) with the Arrays in it, nested lists
    and tuples included, viewed as plain ndarrays."""
    if type(args) is dict:
        return {k: _plain_value(v) for k, v in args.items()}
    return type(args)(_plain_value(a) for a in args)


def _plain_value(x):
    if type(x) is Array or type(x) is WeakArray:
        return x.view(np.ndarray)
    if type(x) in (list, tuple):
        return _plain(x)
    return x


#: the in-place operators; on the arrays functrans hands out they return NotImplemented,
#: so that Python evaluates ``x op= y`` as ``x = x op y``: a new array (broadcast, promoted
#: as the operator is), the old one untouched, as for JAX's arrays
IN_PLACE_OPERATORS = ("__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__",
                      "__imod__", "__ipow__", "__imatmul__", "__iand__", "__ior__", "__ixor__",
                      "__ilshift__", "__irshift__")


def _in_place_operator(name: str):
    def make(base: type):
        def operator(self, other):
            return NotImplemented  # Python then evaluates x = x op y
        operator.__name__ = operator.__qualname__ = name
        return operator
    return make


def _item_assignment(base: type):
    def __setitem__(self, index, value):
        raise TypeError(
            f"functrans arrays are immutable and do not support item assignment "
            f"(x[{index!r}] = ...), as JAX's arrays do not. Build a new array instead: "
            f"x = x.at[{index!r}].set(value) (or .add, .multiply, .min, .max); "
            f"np.array(x) gives a mutable NumPy copy.")
    return __setitem__


def _writing_method(name: str, instead: str):
    def make(base: type):
        def method(self, *args, **kwargs):
            raise TypeError(f"functrans arrays are immutable: x.{name}(...) would change x "
                            f"in place. {instead}")
        method.__name__ = method.__qualname__ = name
        method.__doc__ = f"Refused: NumPy's ``{name}`` writes in place. {instead}"
        return method
    return make


#: methods that write into the array, and what to do instead
_WRITING_METHODS = {
    "fill": "Use functrans.numpy.full_like(x, value).",
    "put": "Use x.at[indices].set(values) (on the flattened array: x.ravel().at[...]).",
    "partition": "Use functrans.numpy.partition(x, kth), which returns a new array.",
    "resize": "Use functrans.numpy.resize(x, shape) or reshape, which return new arrays.",
    "setfield": "Build a new array.",
    "itemset": "Use x.at[index].set(value).",
}


def _missing(base: type, name: str):
    """The attribute ``name`` of an array type that lacks it: still lacking."""
    def missing(self):
        raise AttributeError(f"'{base.__name__}' object has no attribute '{name}'")
    return property(missing)


def _only_if_present(name: str, make: Callable[[type], Any]) -> Callable[[type], Any]:
    return lambda base: make(base) if hasattr(base, name) else _missing(base, name)


def _sort_of(base: Any):
    base_sort = base.sort

    def sort(self, axis=-1, *args, **kwargs):
        """``x.sort(...)`` as JAX's: a sorted new array (NumPy's sorts ``x`` in place)."""
        out = self.view(type=base).copy()
        base_sort(out, axis, *args, **kwargs)
        return _result_array(out)
    return sort


def _byteswap_of(base: Any):
    base_byteswap = base.byteswap

    def byteswap(self, inplace=False):
        """The array with its bytes swapped, as a new array (``inplace=True`` is refused)."""
        if inplace:
            raise TypeError("functrans arrays are immutable: x.byteswap(inplace=True) would "
                            "change x in place; use x.byteswap(), which returns a new array.")
        return base_byteswap(self, inplace)
    return byteswap


#: What functrans.numpy adds to the arrays functrans hands out (``at``, a ``__getitem__``
#: taking tracers): attribute name -> function of the array type extended (``np.ndarray``
#: for ``Array``, ``cupy.ndarray`` for its device counterpart) -> the attribute.
result_type_attributes: dict[str, Callable[[type], Any]] = {
    "__setitem__": _item_assignment,
    "weak_type": lambda base: False,
    "sort": _only_if_present("sort", _sort_of),
    "byteswap": _only_if_present("byteswap", _byteswap_of),
    **{name: _only_if_present(name, _in_place_operator(name)) for name in IN_PLACE_OPERATORS},
    **{name: _only_if_present(name, _writing_method(name, instead))
       for name, instead in _WRITING_METHODS.items()}}
for _name, _make in result_type_attributes.items():
    setattr(Array, _name, _make(np.ndarray))
#: device array type -> its subclass that functrans hands out (the subclass maps to itself)
_device_result_types: dict[type, type] = {}
#: the subclasses ``device_result_type`` made
_made_device_types: set[type] = set()


def device_result_type(x) -> type:
    """The subclass of the type of the device array ``x`` (``cupy.ndarray``) that functrans
    hands out outside transforms, as ``Array`` is for NumPy: the same array with ``.at``
    (docs/indexing.md), computed on by the same library.  Made on first use."""
    array_type = type(x)
    sub = _device_result_types.get(array_type)
    if sub is None and (not hasattr(array_type, "view") or backend.library_of(x).lazy):
        # no subclass views, or a lazy library's graph (dask): handed out as it is
        sub = _device_result_types[array_type] = array_type
    if sub is None:
        sub = type("DeviceArray", (array_type,), {
            "__slots__": (), "__module__": __name__,
            "__doc__": f"A {array_type.__name__} with JAX's ``x.at[index]`` updates.",
            **{name: make(array_type) for name, make in result_type_attributes.items()}})
        backend.register_array_library(sub, backend.library_of(x))
        Array.register(sub)
        _device_result_types[array_type] = _device_result_types[sub] = sub
        _made_device_types.add(sub)
    return sub


_set_flags = np.ndarray.setflags


def _read_only(x: np.ndarray) -> Array:
    view = x.view(type=Array)
    _set_flags(view, write=False)
    return view


def _result_array(x):
    t = type(x)
    if t is np.ndarray:
        return _read_only(x)
    if t is Array:  # computed by the user's own call of an operation: fresh memory
        _set_flags(x, False)
        return x
    if t in _PY_SCALARS:
        return x
    if isinstance(x, np.generic):  # a NumPy scalar: a 0-d Array, as JAX gives 0-d arrays
        return _read_only(np.asarray(x))
    if not backend.is_device_array(x):
        return x
    sub = device_result_type(x)
    return x if sub is t else x.view(type=sub)


def user_result(out):
    """``out`` (an array or a list or tuple of them) with its arrays viewed as the types
    functrans hands out: read-only ``Array`` for NumPy arrays and NumPy scalars (0-d ones
    included), ``device_result_type`` for device ones.  Python scalars stay as they are."""
    if type(out) is np.ndarray:
        return _read_only(out)
    if type(out) in (list, tuple):
        return type(out)(_result_array(o) for o in out)
    return _result_array(out)


def weak_result(x):
    """The array ``x`` (NumPy or device, or a NumPy scalar) as a weakly typed one
    (``WeakArray``); lazy arrays (dask), which cannot carry the mark, as they are."""
    t = type(x)
    if t in WEAK_ARRAY_TYPES:
        return x
    if t is np.ndarray or t is Array or isinstance(x, np.generic):
        view = np.asarray(x).view(type=WeakArray)
        _set_flags(view, write=False)
        return view
    if not backend.is_device_array(x):
        return x
    sub = device_result_type(x)
    if sub not in _made_device_types:  # handed out as it is (dask): no subclass to mark
        return x
    weak = _weak_device_types.get(sub)
    if weak is None:
        weak = type("WeakDeviceArray", (sub,), {
            "__slots__": (), "__module__": __name__, "weak_type": True,
            "__doc__": f"A weakly typed {sub.__name__} (see ``WeakArray``).",
            **weak_type_attributes})
        backend.register_array_library(weak, backend.library_of(x))
        _weak_device_types[sub] = _weak_device_types[weak] = weak
        _device_result_types[weak] = weak
        _made_device_types.add(weak)
        WEAK_ARRAY_TYPES.add(weak)
    return x if t is weak else x.view(type=weak)


def strip_weak(x):
    """A weakly typed array as the plain backend array it views (``np.ndarray``,
    ``cupy.ndarray``), for code that computes with the backend's own operators; anything
    else as it is."""
    t = type(x)
    return x.view(type=t.__mro__[2]) if t in WEAK_ARRAY_TYPES else x  # Weak -> Array -> base


def hand_out(values: list) -> list:
    """``values`` (a flat list of a public transform's results) as functrans hands results
    out: arrays (0-d ones and NumPy scalars included) as read-only ``Array``
    (``DeviceArray``); Python scalars and everything else as they are."""
    return [_result_array(v) for v in values]
