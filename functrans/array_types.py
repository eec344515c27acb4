"""The array types functrans hands out: ``Array`` for NumPy arrays and, for a device
library whose arrays support subclass views (CuPy), its ``DeviceArray`` subclass.

They are the same arrays with JAX's ``x.at[index]`` updates and indices that may be
tracers (``result_type_attributes``, filled by ``functrans.numpy``).  Interpreters and
rules compute on plain backend arrays; these types are applied once, where a result is
handed to the user: by the bottom interpreter for an operation the user's code calls
outside transforms (``core.EvalTrace``), and by the public transforms for what they return
(``hand_out``).  A backend whose arrays cannot be viewed as a subclass (``view(type=...)``),
or whose arrays are lazy graphs (dask), hands out its own arrays unchanged.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from functrans import backend

__all__ = ["Array", "result_type_attributes", "device_result_type", "user_result", "hand_out"]

_PY_SCALARS = frozenset({int, float, complex, bool})


class Array(np.ndarray):
    """The NumPy arrays functrans computes outside transforms: ndarrays in every way (repr
    included) that also have JAX's ``x.at[index]`` updates, installed by functrans.numpy."""

    __slots__ = ()

    def __repr__(self):
        return repr(self.view(type=np.ndarray))

    def __array_wrap__(self, arr, context=None, return_scalar=False):
        # NumPy's own operations on an Array: scalars stay scalars (y.sum() as for ndarray)
        if return_scalar:
            return arr[()]
        return arr.view(type=Array) if type(arr) is np.ndarray else arr


#: What functrans.numpy adds to the arrays functrans hands out (``at``, a ``__getitem__``
#: taking tracers): attribute name -> function of the array type extended (``np.ndarray``
#: for ``Array``, ``cupy.ndarray`` for its device counterpart) -> the attribute.
result_type_attributes: dict[str, Callable[[type], Any]] = {}
#: device array type -> its subclass that functrans hands out (the subclass maps to itself)
_device_result_types: dict[type, type] = {}


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
        _device_result_types[array_type] = _device_result_types[sub] = sub
    return sub


def _result_array(x):
    t = type(x)
    if t is np.ndarray:
        return x.view(type=Array) if x.ndim else x
    if t in _PY_SCALARS or t is Array or not backend.is_device_array(x):
        return x
    sub = device_result_type(x)
    return x if sub is t or not x.ndim else x.view(type=sub)


def user_result(out):
    """``out`` (an array or a list or tuple of them) with its arrays viewed as the types
    functrans hands out: ``Array`` for NumPy arrays, ``device_result_type`` for device ones
    (0-d ones stay as they are: they are scalars to the transforms' outputs)."""
    if type(out) is np.ndarray:
        return out.view(type=Array) if out.ndim else out
    if type(out) in (list, tuple):
        return type(out)(_result_array(o) for o in out)
    return _result_array(out)




def hand_out(values: list) -> list:
    """``values`` (a flat list of a public transform's results) as functrans hands results
    out: arrays of one or more axes as ``Array`` (``DeviceArray``); 0-d arrays, scalars and
    everything else as they are."""
    return [_result_array(v) for v in values]
