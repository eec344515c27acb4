"""Array creation: from values (``asarray``, ``array``), from shapes (``zeros``, ``arange``,
``eye``, ...) and like a given array (``zeros_like``, ...).

Arrays made from or next to user arrays live on the device of those arrays (through
``functrans.backend``); arrays made from shapes alone are NumPy arrays unless ``like=`` a
device array is given, as in NumPy.  A new creation function goes here.
"""
from __future__ import annotations

import numpy as np

from functrans import backend, lax
from functrans.core import Tracer, user_result
from functrans.numpy._util import arg, dtype_of, sequence_to_array

__all__ = ["asarray", "array", "zeros", "ones", "full", "empty", "arange", "linspace", "eye",
           "identity", "zeros_like", "ones_like", "full_like"]


def asarray(a, dtype=None):
    """Like ``numpy.asarray``: tracers and device arrays stay what they are (converted to
    ``dtype`` if given); lists holding tracers or device arrays are stacked.

    >>> import functrans.numpy as fnp
    >>> fnp.asarray([1, 2], dtype=fnp.float32)
    array([1., 2.], dtype=float32)
    """
    if isinstance(a, Tracer):
        return a if dtype is None else lax.convert_element_type(a, dtype)
    if isinstance(a, (list, tuple)):
        return user_result(sequence_to_array(a, dtype))
    if backend.is_device_array(a):
        return a if dtype is None else backend.asarray(a, dtype, like=a)
    return user_result(np.asarray(a, dtype=dtype))


def array(a, dtype=None, copy: bool = True):
    """Like ``numpy.array`` (a copy by default); tracers and device arrays as in
    ``asarray``.

    >>> import functrans.numpy as fnp
    >>> fnp.array([[1, 2], [3, 4]]).shape
    (2, 2)
    """
    if isinstance(a, (Tracer, list, tuple)):
        return asarray(a, dtype)
    return user_result(backend.array_module(a).array(a, dtype=dtype, copy=copy))


def zeros(shape, dtype=None, *, like=None, device=None):
    """Zeros of ``shape`` (float64 unless ``dtype`` is given), on the device of ``like``.

    >>> import functrans.numpy as fnp
    >>> fnp.zeros((2, 3), fnp.float32).dtype
    dtype('float32')
    """
    _check_device("zeros", device)
    return user_result(backend.zeros(shape, _float_unless(dtype), like=like))


def ones(shape, dtype=None, *, like=None, device=None):
    """Ones of ``shape`` (float64 unless ``dtype`` is given), on the device of ``like``.

    >>> import functrans.numpy as fnp
    >>> fnp.ones(3)
    array([1., 1., 1.])
    """
    _check_device("ones", device)
    return user_result(backend.ones(shape, _float_unless(dtype), like=like))


def full(shape, fill_value, dtype=None, *, like=None, device=None):
    """``fill_value`` repeated to ``shape`` (its dtype unless ``dtype`` is given), on the
    device of ``like``.

    >>> import functrans.numpy as fnp
    >>> fnp.full(2, 7)
    array([7, 7])
    """
    _check_device("full", device)
    return user_result(backend.full(shape, fill_value, dtype, like=like))


def empty(shape, dtype=None, *, like=None, device=None):
    """An array of ``shape``; as in JAX it is filled with zeros, so results never depend on
    leftover memory.

    >>> import functrans.numpy as fnp
    >>> fnp.empty(2)
    array([0., 0.])
    """
    _check_device("empty", device)
    return user_result(backend.zeros(shape, _float_unless(dtype), like=like))


def arange(start, stop=None, step=None, dtype=None, *, like=None, device=None):
    """Evenly spaced values in ``[start, stop)`` (``[0, start)`` with one argument).

    >>> import functrans.numpy as fnp
    >>> fnp.arange(1, 7, 2)
    array([1, 3, 5])
    """
    _check_device("arange", device)
    if stop is None:
        start, stop = 0, start
    args = (start, stop) if step is None else (start, stop, step)
    return user_result(backend.arange(*args, dtype=dtype, like=like))


def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype=None, axis: int = 0, *, like=None, device=None):
    """``num`` evenly spaced values from ``start`` to ``stop`` (included if ``endpoint``).

    >>> import functrans.numpy as fnp
    >>> fnp.linspace(0.0, 1.0, 5)
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    _check_device("linspace", device)
    return user_result(backend.array_module(like).linspace(start, stop, num, endpoint,
                                                             retstep, dtype, axis))


def eye(N: int, M: int | None = None, k: int = 0, dtype=None, *, like=None, device=None):
    """An ``N x M`` array with ones on diagonal ``k`` and zeros elsewhere.

    >>> import functrans.numpy as fnp
    >>> fnp.eye(2, 3, 1)
    array([[0., 1., 0.],
           [0., 0., 1.]])
    """
    _check_device("eye", device)
    return user_result(backend.eye(N, M, k, _float_unless(dtype), like=like))


def identity(n: int, dtype=None, *, like=None):
    """The ``n x n`` identity matrix.

    >>> import functrans.numpy as fnp
    >>> fnp.identity(2, fnp.int32)
    array([[1, 0],
           [0, 1]], dtype=int32)
    """
    return user_result(backend.eye(n, dtype=_float_unless(dtype), like=like))


def _check_device(name: str, device) -> None:
    # JAX's `device=` keyword; arrays go where `like=` lives, and NumPy's only device is the CPU.
    if device not in (None, "cpu"):
        raise ValueError(f"{name}: device={device!r} is not supported; pass like= an array on "
                         "the device you want (a CuPy array for the GPU)")


def _float_unless(dtype):
    return float if dtype is None else dtype


def zeros_like(a, dtype=None):
    """Zeros of the shape of ``a``, on its device (its dtype unless ``dtype`` is given).

    >>> import functrans.numpy as fnp
    >>> fnp.zeros_like(fnp.asarray([1.5, 2.5]), dtype=fnp.int32)
    array([0, 0], dtype=int32)
    """
    a = arg(a)
    z = lax.zeros_like(a)
    return z if dtype is None else lax.convert_element_type(z, dtype)


def ones_like(a, dtype=None):
    """Ones of the shape of ``a``, on its device (its dtype unless ``dtype`` is given).

    >>> import functrans.numpy as fnp
    >>> fnp.ones_like(fnp.asarray([1, 2]))
    array([1, 1])
    """
    return full_like(a, 1, dtype)


def full_like(a, fill_value, dtype=None):
    """An array like ``a`` (shape, device; dtype unless given) filled with ``fill_value``
    converted to that dtype.

    >>> import functrans.numpy as fnp
    >>> fnp.full_like(fnp.asarray([1, 2]), 2.5)
    array([2, 2])
    """
    a = arg(a)
    dtype = dtype_of(a) if dtype is None else np.dtype(dtype)
    fill = lax.convert_element_type(arg(fill_value), dtype)
    return lax.add(lax.convert_element_type(lax.zeros_like(a), dtype), fill)
