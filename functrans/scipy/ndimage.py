"""``functrans.scipy.ndimage``: ``map_coordinates``, as ``jax.scipy.ndimage``: nearest and
linear interpolation of an N-dimensional array at arbitrary coordinates, differentiable in
the array and (linear) in the coordinates.

>>> import numpy as np, functrans.scipy.ndimage as ndimage
>>> image = np.arange(12.0).reshape(3, 4)
>>> ndimage.map_coordinates(image, [np.array([0.5, 1.5]), np.array([1.5, 2.5])], order=1)
array([3.5, 8.5])
"""
from __future__ import annotations

import functools
import itertools
import operator

import numpy as np

import functrans.numpy as fnp
from functrans import backend, lax
from functrans.core import get_aval

__all__ = ["map_coordinates"]


def _fold(index, period: int, size: int):
    """``index`` folded into ``[0, size)`` by a reflection of the given period."""
    r = fnp.remainder(index, period)
    return fnp.where(r < size, r, period - r)


def _mirror(index, size: int):
    """Positions reflected about the first and last samples (``d c b | a b c d | c b a``,
    period ``2 (size - 1)``): SciPy's ``mirror``."""
    if size == 1:
        return fnp.zeros_like(index)
    return _fold(index, 2 * (size - 1), size)


def _reflect(index, size: int):
    """Positions reflected about the outer edges of the samples (``d c b a | a b c d |
    d c b a``, period ``2 size``): SciPy's ``reflect``."""
    r = fnp.remainder(index, 2 * size)
    return fnp.where(r < size, r, 2 * size - 1 - r)


_INDEX_FIXERS = {
    "constant": lambda index, size: fnp.clip(index, 0, size - 1),
    "nearest": lambda index, size: fnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: fnp.remainder(index, size),
    "mirror": _mirror,
    "reflect": _reflect,
}


def _nearest(coordinate):
    # lax.round rounds halves away from zero, as JAX (NumPy's round goes to even)
    return [(lax.convert_element_type(lax.round(coordinate), np.int64), None)]


def _linear(coordinate):
    lower = fnp.floor(coordinate)
    upper_weight = coordinate - lower
    index = lax.convert_element_type(lower, np.int64)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


def _at(values, indices: tuple):
    """``values[indices]`` for in-range integer arrays of one shape indexing the leading
    axes: a dask array's own ``[]`` takes at most one integer array, so there the positions
    go to one gather (chunk by chunk)."""
    if backend.is_lazy(values):
        return lax.gather(values, fnp.stack(list(indices), axis=-1))
    return values[tuple(indices)]


def map_coordinates(input, coordinates, order: int, mode: str = "constant", cval=0.0):
    """The values of ``input`` interpolated at ``coordinates``, as
    ``jax.scipy.ndimage.map_coordinates``: ``coordinates`` is a sequence of ``input.ndim``
    arrays (broadcast together; the result has their shape) of positions in index units.

    ``order`` 0 takes the nearest sample (halves round away from zero), ``order`` 1
    interpolates linearly between the ``2**ndim`` neighbours.  ``mode`` says what samples
    beyond the edges are: ``"constant"`` (``cval``; SciPy's ``"grid-constant"``),
    ``"nearest"`` (the edge sample), ``"wrap"`` (periodic; SciPy's ``"grid-wrap"``),
    ``"mirror"`` (reflected about the edge samples) or ``"reflect"`` (reflected about the
    edges between samples), as JAX.  Integer input gives integer output (rounded).

    >>> import numpy as np, functrans as ft, functrans.scipy.ndimage as ndimage
    >>> line = np.array([0.0, 10.0, 20.0])
    >>> ndimage.map_coordinates(line, [np.array([-1.0, 0.25, 3.0])], order=1, mode="wrap")
    array([20. ,  2.5,  0. ])
    >>> float(ft.grad(lambda c: ndimage.map_coordinates(line, [c], order=1))(0.25))
    10.0
    """
    input = fnp.asarray(input)
    aval = get_aval(input)
    if isinstance(coordinates, (list, tuple)):
        coordinates = [fnp.asarray(c) for c in coordinates]
    else:
        coordinates = fnp.asarray(coordinates)
        coordinates = [coordinates[i] for i in range(get_aval(coordinates).shape[0])] \
            if get_aval(coordinates).ndim else [coordinates]
    if len(coordinates) != aval.ndim:
        raise ValueError(f"map_coordinates: coordinates must be a sequence of input.ndim = "
                         f"{aval.ndim} arrays (input has shape {aval.shape}), got "
                         f"{len(coordinates)}")
    fixer = _INDEX_FIXERS.get(mode)
    if fixer is None:
        raise NotImplementedError(f"map_coordinates: mode {mode!r} is not supported; use one "
                                  f"of {sorted(_INDEX_FIXERS)}")
    if order not in (0, 1):
        raise NotImplementedError(f"map_coordinates: order must be 0 (nearest) or 1 "
                                  f"(linear), got {order!r}")
    float_dtype = aval.dtype if aval.dtype.kind in "fc" else np.dtype(np.float64)
    coordinates = [c if get_aval(c).dtype.kind == "f" else fnp.asarray(c, float_dtype)
                   for c in coordinates]
    coordinates = fnp.broadcast_arrays(*coordinates)
    nodes_per_axis = []
    for coordinate, size in zip(coordinates, aval.shape):
        nodes = []
        for index, weight in (_nearest if order == 0 else _linear)(coordinate):
            valid = ((index >= 0) & (index < size)) if mode == "constant" else None
            nodes.append((fixer(index, size), valid, weight))
        nodes_per_axis.append(nodes)
    result = None
    if isinstance(cval, (int, float, complex, np.number)):
        cval = aval.dtype.type(cval)  # a scalar: device kernels take it without a copy
    else:
        cval = fnp.asarray(cval, aval.dtype)
    for corner in itertools.product(*nodes_per_axis):
        indices = tuple(index for index, _, _ in corner)
        valids = [valid for _, valid, _ in corner if valid is not None]
        weights = [weight for _, _, weight in corner if weight is not None]
        value = _at(input, indices)
        if valids:
            value = fnp.where(functools.reduce(operator.and_, valids), value, cval)
        if weights:
            value = functools.reduce(operator.mul, weights) * value
        result = value if result is None else result + value
    if aval.dtype.kind in "iub":
        return lax.convert_element_type(lax.round(result), aval.dtype)
    return fnp.asarray(result, aval.dtype)
