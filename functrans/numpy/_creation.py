"""Array creation: from values (``asarray``, ``array``), from shapes (``zeros``, ``arange``,
``eye``, ...) and like a given array (``zeros_like``, ...).

Arrays made from or next to user arrays live on the device of those arrays (through
``functrans.backend``); arrays made from shapes alone are NumPy arrays unless ``like=`` a
device array is given, as in NumPy.  A new creation function goes here.
"""
from __future__ import annotations

import numpy as np

from functrans import backend, core, lax
from functrans.array_types import WEAK_ARRAY_TYPES, user_result, weak_result
from functrans.core import Tracer, get_aval
from functrans.numpy._devices import device_context, like_for_device, move_to_device
from functrans.numpy._util import arg, dtype_of, sequence_to_array, shape_of, static_int
from functrans.primitives import shape as shape_ops
from functrans.primitives.conversion import zeros_like_p

#: Python scalar types whose arrays are weakly typed (not bool: JAX's bools are strong)
_WEAK_SCALARS = (int, float, complex)

__all__ = ["asarray", "array", "zeros", "ones", "full", "empty", "arange", "linspace", "eye",
           "identity", "zeros_like", "ones_like", "full_like", "empty_like", "copy", "tri",
           "meshgrid", "fromfunction", "logspace", "geomspace", "bartlett",
           "blackman", "hamming", "hanning", "kaiser", "frombuffer", "fromiter", "fromstring"]


def asarray(a, dtype=None, order=None, *, copy=None, device=None):
    """Like ``numpy.asarray``: tracers and device arrays stay what they are (converted to
    ``dtype`` if given); lists holding tracers or device arrays are stacked.

    ``copy=True`` always gives a new array, ``copy=False`` refuses to (a ValueError when
    a copy is needed), and the default copies only when needed.  Traced values are never
    changed in place, so a tracer is never copied.  ``device=`` places the result (see
    ``__array_namespace_info__().devices()``).

    >>> import functrans.numpy as fnp
    >>> fnp.asarray([1, 2], dtype=fnp.float32)
    array([1., 2.], dtype=float32)
    """
    if order not in (None, "K", "A", "C"):
        raise NotImplementedError(f"asarray: order={order!r} is not supported; only 'C'")
    if isinstance(a, Tracer):
        if dtype is not None and np.dtype(dtype) != get_aval(a).dtype:
            if copy is False:
                raise ValueError(f"asarray: converting a {get_aval(a).str_short()} traced value"
                                 f" to {np.dtype(dtype)} makes a new array, but copy=False")
            a = lax.convert_element_type(a, dtype)
        return move_to_device("asarray", a, device)
    if isinstance(a, (list, tuple)):
        if copy is False:
            raise ValueError("asarray: a list or tuple needs a new array, but copy=False")
        return move_to_device("asarray", user_result(sequence_to_array(a, dtype)), device)
    if backend.is_device_array(a):
        xp = backend.array_module(a)
        out = (xp.array(a, dtype=dtype, copy=True) if copy else
               a if dtype is None else backend.asarray(a, dtype, like=a))
        if copy is False and out is not a:
            raise ValueError(f"asarray: converting {a.dtype} to {np.dtype(dtype)} makes a new "
                             "array, but copy=False")
        return move_to_device("asarray", user_result(out), device)
    if dtype is None and (type(a) in _WEAK_SCALARS or type(a) in WEAK_ARRAY_TYPES):
        # weakly typed, as JAX's: it takes x's dtype in x * a
        out = np.array(a, copy=True) if copy else np.asarray(a)
        return move_to_device("asarray", weak_result(out), device)
    if copy is None:
        out = np.asarray(a, dtype)
    else:
        try:
            out = np.array(a, dtype=dtype, copy=copy)
        except ValueError as e:
            if copy is not False:
                raise
            raise ValueError(f"asarray: {type(a).__name__} as an array of dtype "
                             f"{np.dtype(dtype) if dtype is not None else 'its own'} needs a "
                             "new array, but copy=False") from e
    return move_to_device("asarray", user_result(out), device)


def array(object, dtype=None, copy: bool = True, order: str | None = "K",  # noqa: A002
          ndmin: int = 0, *, device=None):
    """Like ``numpy.array`` (a copy by default); tracers and device arrays as in
    ``asarray``.

    >>> import functrans.numpy as fnp
    >>> fnp.array([[1, 2], [3, 4]]).shape
    (2, 2)
    """
    if order not in ("K", "A", "C", "F", None):
        raise ValueError(f"array: order must be 'K', 'A', 'C' or 'F', got order={order!r}")
    if isinstance(object, (Tracer, list, tuple)) or (dtype is None and (
            type(object) in _WEAK_SCALARS or type(object) in WEAK_ARRAY_TYPES)):
        out = asarray(object, dtype, copy=copy or None, device=device)
    elif backend.is_lazy(object):  # a dask array: a value (no layout, nothing to copy)
        out = object if dtype is None else object.astype(dtype)
    else:
        out = move_to_device("array", user_result(backend.array_module(object).array(
            object, dtype=dtype, copy=copy, order=order or "K")), device)
    if ndmin and ndmin > len(get_aval(out).shape):  # leading axes of size 1, as NumPy
        shape = get_aval(out).shape
        out = shape_ops.reshape(out, (1,) * (ndmin - len(shape)) + shape)
    return out


def zeros(shape, dtype=None, *, like=None, device=None):
    """Zeros of ``shape`` (float64 unless ``dtype`` is given), on the device of ``like``.

    >>> import functrans.numpy as fnp
    >>> fnp.zeros((2, 3), fnp.float32).dtype
    dtype('float32')
    """
    like = like_for_device("zeros", device, like)
    with device_context(device):
        return user_result(backend.zeros(shape, _float_unless(dtype), like=like))


def ones(shape, dtype=None, *, like=None, device=None):
    """Ones of ``shape`` (float64 unless ``dtype`` is given), on the device of ``like``.

    >>> import functrans.numpy as fnp
    >>> fnp.ones(3)
    array([1., 1., 1.])
    """
    like = like_for_device("ones", device, like)
    with device_context(device):
        return user_result(backend.ones(shape, _float_unless(dtype), like=like))


def full(shape, fill_value, dtype=None, *, like=None, device=None):
    """``fill_value`` repeated to ``shape`` (its dtype unless ``dtype`` is given), on the
    device of ``like``; a traced ``fill_value`` carries derivatives.

    >>> import functrans.numpy as fnp
    >>> fnp.full(2, 7)
    array([7, 7])
    """
    like = like_for_device("full", device, like)
    with device_context(device):
        if isinstance(fill_value, Tracer):  # broadcast the traced value: it keeps derivatives
            fill = fill_value if dtype is None else lax.convert_element_type(fill_value, dtype)
            shape = _static_shape(shape, "full")
            return shape_ops.broadcast_to(fill, shape)
        if like is None and backend.is_device_array(fill_value):
            like = fill_value  # a device scalar fills an array on its device
        out = backend.full(shape, fill_value, dtype, like=like)
        # a Python scalar's value is weakly typed, as in JAX: it takes x's dtype in x * out
        return weak_result(out) if dtype is None and type(fill_value) in _WEAK_SCALARS else (
            user_result(out))


def empty(shape, dtype=None, *, like=None, device=None):
    """An array of ``shape``; as in JAX it is filled with zeros, so results never depend on
    leftover memory.

    >>> import functrans.numpy as fnp
    >>> fnp.empty(2)
    array([0., 0.])
    """
    like = like_for_device("empty", device, like)
    with device_context(device):
        return user_result(backend.zeros(shape, _float_unless(dtype), like=like))


def arange(start, stop=None, step=None, dtype=None, *, like=None, device=None):
    """Evenly spaced values in ``[start, stop)`` (``[0, start)`` with one argument).

    >>> import functrans.numpy as fnp
    >>> fnp.arange(1, 7, 2)
    array([1, 3, 5])
    """
    like = like_for_device("arange", device, like)
    if (stop is None and step is None and like is None and device is None
            and _is_int(start) and not isinstance(core.dynamic_trace(), core.EvalTrace)):
        # Staged (jit, make_jaxpr): an iota, as JAX's arange(n), not a constant of n
        # elements (on dask, each task computes its own chunk's rows of it).
        dtype = np.dtype(dtype) if dtype is not None else backend.arange(0).dtype
        return lax.iota(dtype, max(int(start), 0))
    with device_context(device):
        if stop is None:
            start, stop = 0, start
        args = (start, stop) if step is None else (start, stop, step)
        return user_result(backend.arange(*args, dtype=dtype, like=like))


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype=None, axis: int = 0, *, like=None, device=None):
    """``num`` evenly spaced values from ``start`` to ``stop`` (included if ``endpoint``).
    ``start`` and ``stop`` may be arrays (broadcast together; the points run along the new
    axis ``axis`` of the result); traced ends carry derivatives.

    >>> import functrans.numpy as fnp
    >>> fnp.linspace(0.0, 1.0, 5)
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    >>> fnp.linspace(fnp.asarray([0.0, 1.0]), 2.0, 3, axis=1)
    array([[0. , 1. , 2. ],
           [1. , 1.5, 2. ]])
    """
    like = like_for_device("linspace", device, like)
    with device_context(device):
        if (isinstance(start, Tracer) or isinstance(stop, Tracer)  # traced ends: derivatives
                or backend.is_lazy(start) or backend.is_lazy(stop)):  # or a lazy graph
            line, step = _traced_line("linspace", start, stop, num, endpoint)
            line = _finish_line(line, axis, dtype)
            return (line, lax.convert_element_type(step, dtype_of(line))) if retstep else line
        xp = backend.array_module(like, start, stop)
        if backend.library_of(like, start, stop).lazy:
            # dask's linspace takes chunks sixth and has no axis: by keyword
            return user_result(xp.linspace(start, stop, num=num, endpoint=endpoint,
                                           retstep=retstep, dtype=dtype, chunks="auto"))
        start, stop = backend.coerce(xp, start, stop)  # (CuPy takes no 0-d NumPy array)
        return user_result(xp.linspace(start, stop, num, endpoint, retstep, dtype, axis))


def eye(N: int, M: int | None = None, k: int = 0, dtype=None, *, like=None, device=None):
    """An ``N x M`` array with ones on diagonal ``k`` and zeros elsewhere.

    >>> import functrans.numpy as fnp
    >>> fnp.eye(2, 3, 1)
    array([[0., 1., 0.],
           [0., 0., 1.]])
    """
    like = like_for_device("eye", device, like)
    with device_context(device):
        return user_result(backend.eye(N, M, k, _float_unless(dtype), like=like))


def identity(n: int, dtype=None, *, like=None, device=None):
    """The ``n x n`` identity matrix.

    >>> import functrans.numpy as fnp
    >>> fnp.identity(2, fnp.int32)
    array([[1, 0],
           [0, 1]], dtype=int32)
    """
    like = like_for_device("identity", device, like)
    with device_context(device):
        return user_result(backend.eye(n, dtype=_float_unless(dtype), like=like))


def _float_unless(dtype):
    return float if dtype is None else dtype


def zeros_like(a, dtype=None, shape=None, *, device=None):
    """Zeros of the shape of ``a``, on its device (its dtype unless ``dtype`` is given).

    >>> import functrans.numpy as fnp
    >>> fnp.zeros_like(fnp.asarray([1.5, 2.5]), dtype=fnp.int32)
    array([0, 0], dtype=int32)
    >>> fnp.zeros_like(fnp.asarray([1.5, 2.5]), shape=(1, 3))
    array([[0., 0., 0.]])
    """
    if shape is not None:
        return empty_like(a, dtype, shape, device=device)
    a = arg(a)
    z = lax.zeros_like(a)
    return move_to_device("zeros_like", z if dtype is None else lax.convert_element_type(
        z, dtype), device)


def ones_like(a, dtype=None, shape=None, *, device=None):
    """Ones of the shape of ``a``, on its device (its dtype unless ``dtype`` is given).

    >>> import functrans.numpy as fnp
    >>> fnp.ones_like(fnp.asarray([1, 2]))
    array([1, 1])
    >>> fnp.ones_like(fnp.asarray([1, 2]), shape=3)
    array([1, 1, 1])
    """
    return full_like(a, 1, dtype, shape, device=device)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None):
    """An array like ``a`` (shape, device; dtype unless given) filled with ``fill_value``
    converted to that dtype.

    >>> import functrans.numpy as fnp
    >>> fnp.full_like(fnp.asarray([1, 2]), 2.5)
    array([2, 2])
    >>> fnp.full_like(fnp.asarray([1, 2]), 7, shape=(2, 2), dtype=float)
    array([[7., 7.],
           [7., 7.]])
    """
    a = arg(a)
    weak = dtype is None and get_aval(a).weak_type  # like a weakly typed a, as in JAX
    dtype = dtype_of(a) if dtype is None else np.dtype(dtype)
    base = (lax.zeros_like(a) if shape is None else
            empty_like(a, dtype, shape, device=device))
    fill = lax.convert_element_type(arg(fill_value), dtype, weak)
    return move_to_device("full_like", lax.add(lax.convert_element_type(base, dtype, weak),
                                               fill), device)


def empty_like(prototype, dtype=None, shape=None, *, device=None):
    """An array like ``prototype`` (device; dtype and shape unless given), filled with zeros
    as in JAX.

    >>> import functrans.numpy as fnp
    >>> fnp.empty_like(fnp.asarray([1, 2]), shape=(2, 2))
    array([[0, 0],
           [0, 0]])
    """
    prototype = arg(prototype)
    dtype = dtype_of(prototype) if dtype is None else np.dtype(dtype)
    if shape is None:
        return zeros_like(prototype, dtype, device=device)
    shape = tuple(int(d) for d in np.atleast_1d(shape)) if np.ndim(shape) else (int(shape),)
    # zeros on the device of the prototype (a tracer's too), then where `device` says
    zeros = zeros_like_p.bind(prototype, shape=shape, dtype=np.dtype(dtype), weak_type=False)
    return move_to_device("empty_like", zeros, device)


def copy(a, order=None):
    """A copy of ``a``; a tracer is returned as it is (traced values are never changed in
    place, so a copy could not be told apart).

    >>> import numpy as np, functrans.numpy as fnp
    >>> x = np.ones(2); y = fnp.copy(x); y[0] = 5.0; x
    array([1., 1.])
    """
    if order not in (None, "K", "C"):
        raise NotImplementedError(f"copy: order={order!r} is not supported; only 'C'")
    a = arg(a)
    return a if isinstance(a, Tracer) else backend.copy(a)


def tri(N: int, M: int | None = None, k: int = 0, dtype=None, *, like=None,  # noqa: N803
        device=None):
    """Ones at and below diagonal ``k`` of an ``N x M`` array (``M = N`` by default), zeros
    above.

    >>> import functrans.numpy as fnp
    >>> fnp.tri(2, 3, 1, dtype=int)
    array([[1, 1, 0],
           [1, 1, 1]])
    """
    like = like_for_device("tri", device, like)
    with device_context(device):
        return backend.tri(N, M, k, dtype=_float_unless(dtype), like=like)


def meshgrid(*xi, copy: bool = True, sparse: bool = False, indexing: str = "xy"):
    """Coordinate arrays from the 1-D coordinate vectors ``xi`` (each is flattened): with
    ``indexing='xy'`` (Cartesian) the first two output axes are swapped relative to
    ``'ij'`` (matrix).  ``sparse`` keeps each output of size 1 along the other axes.
    Returns a tuple, as the array API standard does since its 2025.12 revision (JAX
    returns a list).

    >>> import functrans.numpy as fnp
    >>> x, y = fnp.meshgrid(fnp.arange(3), fnp.arange(2))
    >>> x
    array([[0, 1, 2],
           [0, 1, 2]])
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    vectors = [arg(x) for x in xi]
    vectors = [shape_ops.reshape(x, (get_aval(x).size,)) for x in vectors]
    sizes = [shape_of(x)[0] for x in vectors]
    n = len(vectors)
    axes = list(range(n))
    if indexing == "xy" and n > 1:
        axes[0], axes[1] = 1, 0
        sizes[0], sizes[1] = sizes[1], sizes[0]
    outs = []
    for x, axis in zip(vectors, axes):
        shape = [1] * n
        shape[axis] = shape_of(x)[0]
        outs.append(shape_ops.reshape(x, shape) if sparse else
                    shape_ops.broadcast_in_dim(x, sizes, (axis,)))
    return tuple(outs)


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """``function(i0, i1, ...)`` called once on the index grids of ``shape`` (each of
    ``dtype``); extra keywords go to ``function``.

    >>> import functrans.numpy as fnp
    >>> fnp.fromfunction(lambda i, j: i + 10 * j, (2, 3), dtype=int)
    array([[ 0, 10, 20],
           [ 1, 11, 21]])
    """
    shape = _static_shape(shape, "fromfunction")
    grids = meshgrid(*[backend.arange(n, dtype=dtype) for n in shape], indexing="ij")
    return function(*grids, **kwargs)


def _static_shape(shape, name: str) -> tuple:
    """``shape`` (an int or a sequence of them) as a tuple of Python ints."""
    if np.ndim(shape) == 0:
        return (static_int(shape, name, "shape"),)
    return tuple(static_int(n, name, "each size") for n in shape)


def _traced_line(name, start, stop, num, endpoint):
    """``num`` points from ``start`` to ``stop`` (broadcast together to a shape ``S``) along
    a new leading axis, shape ``(num, *S)``, and the step (shape ``S``), built with
    primitives so that traced ends carry derivatives.  Computed in NumPy's dtype: float
    ends keep their precision, integer ends give float64."""
    start, stop = arg(start), arg(stop)
    num = static_int(num, name, "num")
    if num < 0:
        raise ValueError(f"{name}: num must be non-negative, got {num}")
    dtype = np.result_type(0.0, *(get_aval(x).dtype for x in (start, stop)))
    try:
        shape = np.broadcast_shapes(shape_of(start), shape_of(stop))
    except ValueError:
        raise ValueError(f"{name}: start of shape {shape_of(start)} and stop of shape "
                         f"{shape_of(stop)} do not broadcast together") from None
    # Host ends stay NumPy scalars (or arrays) and the fractions are made on the traced
    # end's device: no host array to copy to a device.
    start, stop = (_scalar_of(x, dtype) for x in (start, stop))
    like = start if isinstance(start, Tracer) else stop
    div = dtype.type(max(num - 1 if endpoint else num, 1))
    full = (num,) + tuple(shape)
    index = shape_ops.broadcast_in_dim(lax.iota(dtype, num, like=like), full, (0,))
    delta = lax.sub(_array_of(stop, shape, like), _array_of(start, shape, like))
    step = lax.div(delta, div)
    wide_delta = shape_ops.broadcast_in_dim(delta, full, tuple(range(1, len(full))))
    wide_step = shape_ops.broadcast_in_dim(step, full, tuple(range(1, len(full))))
    # NumPy's arithmetic, so that values agree to the last bit: i * step + start, or
    # i / div * delta when any step underflows to zero, and the end point exactly stop.
    any_zero = lax.eq(step, dtype.type(0))
    if shape:
        any_zero = lax.reduce_max(any_zero, tuple(range(len(shape))))
    any_zero = shape_ops.broadcast_to(any_zero, full)
    line = lax.select(any_zero, lax.mul(lax.div(index, div), wide_delta),
                      lax.mul(index, wide_step))
    line = lax.add(line, shape_ops.broadcast_in_dim(_array_of(start, shape, like), full,
                                                    tuple(range(1, len(full)))))
    if endpoint and num > 1:
        line = _with_element(line, num - 1, stop)
    return line, step


def _array_of(x, shape, like):
    """``x`` broadcast to ``shape`` on the device of ``like``: a host scalar is added to
    zeros made there (kernels read it as an argument), a host array is copied there."""
    if not (isinstance(x, Tracer) or backend.is_device_array(x)):
        if np.ndim(x):
            x = backend.asarray(x, like=like)
        else:
            zeros = lax.mul(lax.iota(np.asarray(x).dtype, 1, like=like), 0)
            x = lax.add(lax.reshape(zeros, ()), x)
    return shape_ops.broadcast_to(x, shape)


def _finish_line(line, axis, dtype):
    """The points' axis moved to ``axis`` and the values cast to ``dtype`` (integers
    rounded down first, as NumPy does)."""
    if dtype is not None:
        dtype = np.dtype(dtype)
        if dtype.kind in "iu":
            line = lax.floor(line)
        if dtype != dtype_of(line):
            line = lax.convert_element_type(line, dtype)
    ndim = len(shape_of(line))
    axis = shape_ops.normalize_axis(static_int(axis, "linspace", "axis"), ndim)
    return shape_ops.moveaxis(line, 0, axis) if axis else line


def _with_element(line, position: int, value):
    """``line`` with element ``position`` along axis 0 exactly ``value`` (a scalar or an
    array of ``line``'s other axes, any device or host value), as NumPy sets the ends
    (``start + (stop - start)`` or ``exp(log r)`` need not round to ``stop``)."""
    shape = shape_of(line)
    index = shape_ops.broadcast_in_dim(lax.iota(dtype_of(line), shape[0], like=line), shape,
                                       (0,))
    value = _array_of(_scalar_of(value, dtype_of(line)), shape[1:], line)
    value = shape_ops.broadcast_in_dim(value, shape, tuple(range(1, len(shape))))
    return lax.select(lax.eq(index, position), value, line)


def _scalar_of(x, dtype):
    """``x`` in ``dtype``: a tracer or device array converted, a host value as a NumPy
    scalar or array (which device kernels take as an argument, not a copy)."""
    if isinstance(x, Tracer) or backend.is_device_array(x):
        return lax.convert_element_type(x, dtype)
    return dtype.type(x) if np.ndim(x) == 0 else np.asarray(x, dtype)


def _by_primitives(x) -> bool:
    """Whether a line's end or parameter is computed with primitives: a tracer, or a lazy
    (dask) array, whose library has no logspace, geomspace or kaiser."""
    return isinstance(x, Tracer) or backend.is_lazy(x)


def logspace(start, stop, num: int = 50, endpoint: bool = True, base=10.0, dtype=None,
             axis: int = 0):
    """``base ** linspace(start, stop, num)``: ``num`` points spaced evenly on a log scale.
    Traced (scalar) ``start``, ``stop`` and ``base`` carry derivatives.

    >>> import functrans.numpy as fnp
    >>> fnp.logspace(0.0, 2.0, 3)
    array([  1.,  10., 100.])
    """
    if not any(_by_primitives(x) for x in (start, stop, base)):
        return backend.array_module(start, stop, base).logspace(start, stop, num, endpoint,
                                                                 base, dtype, axis)
    exponents, _ = _traced_line("logspace", start, stop, num, endpoint)
    base = arg(base)
    try:
        shape = np.broadcast_shapes(shape_of(exponents)[1:], shape_of(base))
    except ValueError:
        raise ValueError(f"logspace: base of shape {shape_of(base)} does not broadcast with "
                         f"start and stop of shape {shape_of(exponents)[1:]}") from None
    full = (shape_of(exponents)[0],) + tuple(shape)
    exponents = shape_ops.broadcast_to(exponents, full)
    base = _array_of(_scalar_of(base, dtype_of(exponents)), shape, exponents)
    base = shape_ops.broadcast_in_dim(base, full, tuple(range(1, len(full))))
    return _finish_line(lax.pow(base, exponents), axis, dtype)  # NumPy's power


def geomspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None, axis: int = 0):
    """``num`` points from ``start`` to ``stop`` (of the same sign) in geometric
    progression.  Traced (scalar, real) ends carry derivatives.

    >>> import functrans.numpy as fnp
    >>> fnp.geomspace(1.0, 1000.0, 4)
    array([   1.,   10.,  100., 1000.])
    """
    xp = backend.array_module(start, stop)
    if not any(_by_primitives(x) for x in (start, stop)) and hasattr(xp, "geomspace"):
        return xp.geomspace(start, stop, num, endpoint, dtype, axis)  # CuPy has none
    start, stop = arg(start), arg(stop)
    real = np.result_type(float, dtype_of(start), dtype_of(stop))  # NumPy's: float64 at least
    start, stop = (lax.convert_element_type(x, real) if isinstance(x, Tracer) else
                   _scalar_of(x, real) for x in (start, stop))
    like = start if isinstance(start, Tracer) else stop
    shape = np.broadcast_shapes(shape_of(arg(start)), shape_of(arg(stop)))
    start, stop = _array_of(start, shape, like), _array_of(stop, shape, like)
    ratio = lax.div(stop, start)
    powers, _ = _traced_line("geomspace", real.type(0), lax.log(ratio), num, endpoint)
    full = shape_of(powers)
    line = lax.mul(shape_ops.broadcast_in_dim(start, full, tuple(range(1, len(full)))),
                   lax.exp(powers))
    # The ends exactly start and stop, as NumPy sets them.
    if num > 0:
        line = _with_element(line, 0, start)
    if endpoint and num > 1:
        line = _with_element(line, num - 1, stop)
    return _finish_line(line, axis, dtype)


def _window(name: str, M):
    M = static_int(M, name, "M")
    return getattr(np, name)(M)


def bartlett(M: int):  # noqa: N803 (NumPy's name)
    """The triangular (Bartlett) window of ``M`` points.

    >>> import functrans.numpy as fnp
    >>> fnp.bartlett(5)
    array([0. , 0.5, 1. , 0.5, 0. ])
    """
    return _window("bartlett", M)


def blackman(M: int):  # noqa: N803
    """The Blackman window of ``M`` points.

    >>> import functrans.numpy as fnp
    >>> fnp.blackman(3).round(6)
    array([-0.,  1., -0.])
    """
    return _window("blackman", M)


def hamming(M: int):  # noqa: N803
    """The Hamming window of ``M`` points.

    >>> import functrans.numpy as fnp
    >>> fnp.hamming(3)
    array([0.08, 1.  , 0.08])
    """
    return _window("hamming", M)


def hanning(M: int):  # noqa: N803
    """The Hann window of ``M`` points.

    >>> import functrans.numpy as fnp
    >>> fnp.hanning(3)
    array([0., 1., 0.])
    """
    return _window("hanning", M)


def _bessel_i0(x, terms: int = 40):
    """The modified Bessel function I0 of a non-negative ``x``, as its power series
    ``sum_k ((x/2)^k / k!)^2`` (40 terms: exact to rounding for x below about 30, the
    range of Kaiser windows' ``beta``)."""
    quarter_square = lax.mul(lax.mul(x, x), 0.25)
    term, total = lax.add(lax.mul(x, 0.0), 1.0), lax.add(lax.mul(x, 0.0), 1.0)
    for k in range(1, terms):
        term = lax.div(lax.mul(term, quarter_square), float(k * k))
        total = lax.add(total, term)
    return total


def kaiser(M: int, beta):  # noqa: N803
    """The Kaiser window of ``M`` points with shape parameter ``beta``:
    ``I0(beta sqrt(1 - (2n/(M-1) - 1)^2)) / I0(beta)``.  A traced ``beta`` carries
    derivatives (I0 is summed as its power series, exact for ``beta`` below about 30).

    >>> import functrans.numpy as fnp
    >>> fnp.kaiser(3, 2.0).round(4)
    array([0.4387, 1.    , 0.4387])
    """
    M = static_int(M, "kaiser", "M")
    if not _by_primitives(beta):
        return backend.array_module(beta).kaiser(M, beta)
    if M < 2:
        return np.ones(M)
    beta = lax.convert_element_type(arg(beta), np.result_type(float, dtype_of(beta)))
    # sqrt(1 - t^2) at t = 2n/(M-1) - 1, made on beta's device
    t = lax.sub(lax.div(lax.iota(dtype_of(beta), M, like=beta),
                        dtype_of(beta).type((M - 1) / 2)), 1.0)
    radius = lax.sqrt(lax.max(lax.sub(1.0, lax.mul(t, t)), 0.0))
    scaled = lax.mul(shape_ops.broadcast_to(beta, (M,)), radius)
    return lax.div(_bessel_i0(scaled), shape_ops.broadcast_to(_bessel_i0(beta), (M,)))


def frombuffer(buffer, dtype=float, count: int = -1, offset: int = 0):
    """A 1-D array of the bytes of ``buffer`` read as ``dtype``, as ``numpy.frombuffer``
    (copied: functrans arrays never alias a caller's buffer).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.frombuffer(np.array([1.5, 2.5]).tobytes())
    array([1.5, 2.5])
    """
    return user_result(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset).copy())


def fromiter(iterable, dtype, count: int = -1):
    """A 1-D array of the values of ``iterable``, as ``numpy.fromiter``.

    >>> import functrans.numpy as fnp
    >>> fnp.fromiter((x * x for x in range(4)), dtype=float)
    array([0., 1., 4., 9.])
    """
    return user_result(np.fromiter(iterable, dtype=dtype, count=count))


def fromstring(string: str, dtype=float, count: int = -1, *, sep: str):
    """A 1-D array of the numbers written in ``string`` separated by ``sep``, as
    ``numpy.fromstring`` (and JAX) with a separator; NumPy's deprecated binary mode
    (``sep=''``) is refused.

    >>> import functrans.numpy as fnp
    >>> fnp.fromstring("1 2 3", dtype=int, sep=" ")
    array([1, 2, 3])
    """
    if sep == "":
        raise ValueError("fromstring: binary mode (sep='') is not supported; use frombuffer")
    return user_result(np.fromstring(string, dtype=dtype, count=count, sep=sep))
