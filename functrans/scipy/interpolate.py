"""``functrans.scipy.interpolate``: ``RegularGridInterpolator``, as
``jax.scipy.interpolate``: linear and nearest interpolation on a rectilinear grid, a pytree
(its grid, values and fill value are leaves) whose evaluation is differentiable in the
values and the query points.

>>> import numpy as np, functrans.scipy.interpolate as interpolate
>>> grid = (np.array([0.0, 1.0, 2.0]), np.array([0.0, 10.0]))
>>> values = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
>>> interpolate.RegularGridInterpolator(grid, values)(np.array([[0.5, 5.0], [3.0, 0.0]]))
array([1.5, nan])
"""
from __future__ import annotations

import itertools

import numpy as np

import functrans.numpy as fnp
from functrans import backend, lax
from functrans.core import get_aval
from functrans.scipy._util import inexact
from functrans.tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


def _check_method(method) -> None:
    if method not in _METHODS:
        raise ValueError(f"RegularGridInterpolator: method {method!r} is not defined; use "
                         f"'linear' or 'nearest'")


class RegularGridInterpolator:
    """Interpolation of ``values`` given on the grid ``points`` (one strictly increasing 1-D
    array per leading axis of ``values``; trailing axes of ``values`` are carried along),
    as ``jax.scipy.interpolate.RegularGridInterpolator``.

    ``method`` is ``"linear"`` (the default) or ``"nearest"`` (a query exactly halfway
    between two grid points takes the lower one).  Query points outside the grid give
    ``fill_value`` (NaN by default); with ``fill_value=None`` they are extrapolated from the
    edge cells.  ``bounds_error=True`` is not supported (it would need the values of traced
    points), as in JAX.  Calling the interpolator with points of shape ``(..., ndim)`` (or
    a tuple of ``ndim`` broadcastable coordinate arrays) gives values of shape
    ``(...) + values.shape[ndim:]``.

    The interpolator is a pytree: it can be passed through ``jit``, ``vmap`` and ``grad``,
    which see its grid, values and fill value as leaves.

    >>> import numpy as np, functrans as ft, functrans.scipy.interpolate as interpolate
    >>> grid = (np.array([0.0, 1.0, 3.0]),)
    >>> f = interpolate.RegularGridInterpolator(grid, np.array([0.0, 2.0, 3.0]))
    >>> f(np.array([0.5, 2.0]))
    array([1. , 2.5])
    >>> float(ft.grad(lambda x: f(x)[0])(2.0))  # the slope of the cell
    0.5
    >>> ft.grad(lambda v: interpolate.RegularGridInterpolator(grid, v)(np.array([2.0]))[0])(
    ...     np.array([0.0, 2.0, 3.0]))
    array([0. , 0.5, 0.5])
    """

    def __init__(self, points, values, method: str = "linear", bounds_error: bool = False,
                 fill_value=np.nan):
        _check_method(method)
        if bounds_error:
            raise NotImplementedError("RegularGridInterpolator: bounds_error=True is not "
                                      "supported (it would need the values of traced "
                                      "points); out-of-grid points get fill_value")
        self.method = method
        self.bounds_error = bounds_error
        values = inexact(values)
        values_shape = get_aval(values).shape
        if len(points) > len(values_shape):
            raise ValueError(f"RegularGridInterpolator: there are {len(points)} point arrays, "
                             f"but values has {len(values_shape)} dimensions (shape "
                             f"{values_shape})")
        grid = tuple(fnp.asarray(p) for p in points)
        for axis, g in enumerate(grid):
            shape = get_aval(g).shape
            if len(shape) != 1 or shape[0] != values_shape[axis]:
                raise ValueError(f"RegularGridInterpolator: points[{axis}] must be 1-D of "
                                 f"length values.shape[{axis}] = {values_shape[axis]}, got "
                                 f"shape {shape}")
            if shape[0] < 2 and method == "linear" or shape[0] < 1:
                raise ValueError(f"RegularGridInterpolator: points[{axis}] needs at least 2 "
                                 f"points, got {shape[0]}")
        if fill_value is not None:
            fill_value = fnp.asarray(fill_value)
            fill_kind, value_kind = get_aval(fill_value).dtype.kind, get_aval(values).dtype.kind
            if fill_kind == "c" and value_kind != "c":
                raise ValueError("RegularGridInterpolator: fill_value must be None or of a "
                                 f"type compatible with values ({get_aval(values).dtype}), "
                                 f"got {get_aval(fill_value).dtype}")
        self.grid = grid
        self.values = values
        self.fill_value = fill_value

    def __call__(self, xi, method: str | None = None):
        method = self.method if method is None else method
        _check_method(method)
        ndim = len(self.grid)
        xi = self._points(xi, ndim)
        xi_shape = get_aval(xi).shape
        flat = fnp.reshape(xi, (-1, ndim))
        indices, fractions, outside = self._find_cells(flat)
        if method == "linear":
            result = self._linear(indices, fractions)
        else:
            result = self._nearest(indices, fractions)
        if self.fill_value is not None:
            trailing = (1,) * (get_aval(result).ndim - 1)
            fill = fnp.asarray(self.fill_value, get_aval(result).dtype)
            result = fnp.where(fnp.reshape(outside, (-1,) + trailing), fill, result)
        return fnp.reshape(result, xi_shape[:-1] + get_aval(self.values).shape[ndim:])

    @staticmethod
    def _points(xi, ndim: int):
        """The query points as one array of shape ``(..., ndim)``."""
        if isinstance(xi, tuple) and len(xi) == 1:
            xi = xi[0]
        if isinstance(xi, tuple):
            xi = fnp.stack(fnp.broadcast_arrays(*[inexact(c) for c in xi]), axis=-1)
        else:
            xi = inexact(xi)
            if get_aval(xi).ndim <= 1:
                xi = fnp.reshape(xi, (-1, ndim))
        if get_aval(xi).shape[-1] != ndim:
            raise ValueError(f"RegularGridInterpolator: the requested points have dimension "
                             f"{get_aval(xi).shape[-1]} (shape {get_aval(xi).shape}), but "
                             f"this interpolator has dimension {ndim}")
        return xi

    def _find_cells(self, flat):
        """Per axis, the lower corner of each point's cell (the edge cells for points
        outside), the fraction of the way across it, and whether any coordinate is off the
        grid."""
        indices, fractions, outside = [], [], None
        for axis, g in enumerate(self.grid):
            x = flat[:, axis]
            size = get_aval(g).shape[0]
            lower = fnp.clip(fnp.searchsorted(g, x) - 1, 0, max(size - 2, 0))
            if size > 1:
                left, right = fnp.take(g, lower), fnp.take(g, lower + 1)
                fractions.append((x - left) / (right - left))
            else:
                fractions.append(fnp.zeros_like(x))
            indices.append(lower)
            off = (x < g[0]) | (x > g[-1])
            outside = off if outside is None else outside | off
        return indices, fractions, outside

    def _trailing(self, weight, count: int):
        return fnp.reshape(weight, get_aval(weight).shape + (1,) * count)

    def _linear(self, indices, fractions):
        trailing = get_aval(self.values).ndim - len(indices)
        result = None
        for corner in itertools.product((0, 1), repeat=len(indices)):
            weight = None
            for upper, fraction in zip(corner, fractions):
                w = fraction if upper else 1 - fraction
                weight = w if weight is None else weight * w
            value = _at(self.values, [i + upper for i, upper in zip(indices, corner)])
            term = value * self._trailing(weight, trailing)
            result = term if result is None else result + term
        return result

    def _nearest(self, indices, fractions):
        picked = tuple(fnp.where(f <= 0.5, i, i + 1) if get_aval(self.grid[a]).shape[0] > 1
                       else i for a, (i, f) in enumerate(zip(indices, fractions)))
        return _at(self.values, picked)


def _at(values, indices):
    """``values[indices]`` for in-range integer arrays of one shape indexing the leading
    axes (a NumPy array takes no traced index: functrans's indexing); a dask array's own
    ``[]`` takes at most one integer array, so there the positions go to one gather."""
    if backend.is_lazy(values):
        return lax.gather(values, fnp.stack(list(indices), axis=-1))
    return fnp.asarray(values)[tuple(indices)]


register_pytree_node(
    RegularGridInterpolator,
    lambda f: ((f.grid, f.values, f.fill_value), (f.method, f.bounds_error)),
    lambda aux, children: _rebuild(aux, children))


def _rebuild(aux, children):
    """An interpolator from its leaves without re-checking them (they may be tracers or
    placeholders of any kind while a transform rebuilds the tree)."""
    f = object.__new__(RegularGridInterpolator)
    f.grid, f.values, f.fill_value = children
    f.method, f.bounds_error = aux
    return f
