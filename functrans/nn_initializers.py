"""``functrans.nn.initializers``: JAX's weight initializers (``jax.nn.initializers``).

Each factory returns an initializer ``init(key, shape, dtype=None)``, ``key`` a
:mod:`functrans.random` key; the draws are those of :mod:`functrans.random` with JAX's
formulas, so for the same key they agree with JAX's up to floating-point rounding.  The
default dtype is float64 (JAX's with ``jax_enable_x64``).  This module is reached as
``functrans.nn.initializers``.

>>> import functrans.random as random
>>> from functrans.nn import initializers
>>> w = initializers.glorot_uniform()(random.PRNGKey(0), (3, 2))
>>> w.shape, bool(abs(w).max() <= (6 / (3 + 2)) ** 0.5)
((3, 2), True)
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from functrans import numpy as fnp
from functrans import random

__all__ = [
    "Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform",
    "he_normal", "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal",
    "lecun_uniform", "normal", "ones", "orthogonal", "truncated_normal", "uniform",
    "variance_scaling", "xavier_normal", "xavier_uniform", "zeros",
]

#: The type of an initializer: ``init(key, shape, dtype=None) -> array``.
Initializer = Callable

# The standard deviation of a standard normal truncated to [-2, 2]: dividing by it gives
# the truncated draws the variance asked for.
_TRUNCATED_STD = 0.87962566103423978


def _dtype(name: str, dtype) -> np.dtype:
    dtype = np.dtype(np.float64 if dtype is None else dtype)
    if dtype.kind != "f":
        raise TypeError(f"initializers.{name}: dtype must be a real floating dtype, got "
                        f"{dtype} (functrans has no complex initializers)")
    return dtype


def _shape(shape) -> tuple:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(
        int(d) for d in shape)


def zeros(key, shape, dtype=None):
    """Zeros (the key is ignored).

    >>> zeros(None, (2,))
    array([0., 0.])
    """
    return fnp.zeros(_shape(shape), _dtype("zeros", dtype))


def ones(key, shape, dtype=None):
    """Ones (the key is ignored).

    >>> ones(None, (2,), np.float32)
    array([1., 1.], dtype=float32)
    """
    return fnp.ones(_shape(shape), _dtype("ones", dtype))


def constant(value, dtype=None) -> Initializer:
    """An initializer filling the shape with ``value``.

    >>> constant(0.5)(None, (2,))
    array([0.5, 0.5])
    """
    def init(key, shape, dtype=dtype):
        return fnp.full(_shape(shape), value, _dtype("constant", dtype))
    return init


def uniform(scale=1e-2, dtype=None) -> Initializer:
    """An initializer drawing uniformly from ``[0, scale)``.

    >>> x = uniform(2.0)(random.PRNGKey(0), (100,))
    >>> bool(x.min() >= 0.0 and x.max() < 2.0)
    True
    """
    def init(key, shape, dtype=dtype):
        dtype = _dtype("uniform", dtype)
        return random.uniform(key, _shape(shape), dtype) * np.asarray(scale, dtype)
    return init


def normal(stddev=1e-2, dtype=None) -> Initializer:
    """An initializer drawing from a normal distribution of mean 0 and deviation ``stddev``.

    >>> normal(1.0)(random.PRNGKey(0), (3,))
    array([-0.20584214, -0.78476578,  1.81608667])
    """
    def init(key, shape, dtype=dtype):
        dtype = _dtype("normal", dtype)
        return random.normal(key, _shape(shape), dtype) * np.asarray(stddev, dtype)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0) -> Initializer:
    """An initializer drawing ``stddev`` times a standard normal truncated to
    ``(lower, upper)`` (so the deviation of the draws is somewhat below ``stddev``).

    >>> x = truncated_normal(1.0)(random.PRNGKey(0), (1000,))
    >>> bool(x.min() > -2.0 and x.max() < 2.0)
    True
    """
    def init(key, shape, dtype=dtype):
        dtype = _dtype("truncated_normal", dtype)
        draws = random.truncated_normal(key, lower, upper, _shape(shape), dtype)
        return draws * np.asarray(stddev, dtype)
    return init


def _size(shape: tuple, axes) -> int:
    axes = (axes,) if isinstance(axes, (int, np.integer)) else axes
    return math.prod(shape[a] for a in axes)


def _fans(name: str, shape: tuple, in_axis, out_axis, batch_axis) -> tuple[float, float]:
    # Every axis that is not an input, output or batch axis is a receptive-field axis (a
    # convolution's window): both fans are multiplied by its size.
    if len(shape) < 2 and isinstance(in_axis, int) and in_axis == -2:
        raise ValueError(f"initializers.{name}: a {len(shape)}-dimensional shape {shape} has "
                         f"no input axis -2; use a shape of 2 or more dimensions or pass "
                         f"in_axis explicitly")
    try:
        fan_in, fan_out = _size(shape, in_axis), _size(shape, out_axis)
        receptive = math.prod(shape) / fan_in / fan_out / _size(shape, batch_axis)
    except IndexError:
        raise ValueError(f"initializers.{name}: in_axis={in_axis}, out_axis={out_axis} or "
                         f"batch_axis={batch_axis} is out of range for shape {shape}") from None
    return fan_in * receptive, fan_out * receptive


_DENOMINATORS = {
    "fan_in": lambda fan_in, fan_out: fan_in,
    "fan_out": lambda fan_in, fan_out: fan_out,
    "fan_avg": lambda fan_in, fan_out: (fan_in + fan_out) / 2,
    "fan_geo_avg": lambda fan_in, fan_out: math.sqrt(fan_in * fan_out),
}


def variance_scaling(scale, mode: str, distribution: str, in_axis: int | Sequence[int] = -2,
                     out_axis: int | Sequence[int] = -1,
                     batch_axis: int | Sequence[int] = (), dtype=None) -> Initializer:
    """An initializer whose draws have variance ``scale / n``, ``n`` the fan given by
    ``mode`` (``"fan_in"``, ``"fan_out"``, ``"fan_avg"`` or ``"fan_geo_avg"``, the fans
    counted along ``in_axis`` and ``out_axis`` times the receptive field: the axes that are
    none of ``in_axis``, ``out_axis``, ``batch_axis``), from ``distribution``:
    ``"truncated_normal"`` (within two deviations), ``"normal"`` or ``"uniform"``.

    >>> w = variance_scaling(2.0, "fan_in", "normal")(random.PRNGKey(1), (400, 300))
    >>> round(float(w.var() * 400), 1)
    2.0
    """
    if mode not in _DENOMINATORS:
        raise ValueError(f"initializers.variance_scaling: mode must be one of "
                         f"{sorted(_DENOMINATORS)}, got {mode!r}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"initializers.variance_scaling: distribution must be "
                         f"'truncated_normal', 'normal' or 'uniform', got {distribution!r}")

    def init(key, shape, dtype=dtype):
        dtype, shape = _dtype("variance_scaling", dtype), _shape(shape)
        fan_in, fan_out = _fans("variance_scaling", shape, in_axis, out_axis, batch_axis)
        variance = scale / _DENOMINATORS[mode](fan_in, fan_out)
        if distribution == "truncated_normal":
            std = np.asarray(math.sqrt(variance) / _TRUNCATED_STD, dtype)
            return random.truncated_normal(key, -2, 2, shape, dtype) * std
        if distribution == "normal":
            return random.normal(key, shape, dtype) * np.asarray(math.sqrt(variance), dtype)
        bound = np.asarray(math.sqrt(3 * variance), dtype)
        return random.uniform(key, shape, dtype, -1.0, 1.0) * bound
    return init


def _scaling(scale, mode, distribution, doc):
    def factory(in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                batch_axis: int | Sequence[int] = (), dtype=None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis,
                                dtype)
    factory.__doc__ = doc
    return factory


glorot_normal = _scaling(1.0, "fan_avg", "truncated_normal", """Glorot (Xavier) normal:
    ``variance_scaling(1.0, "fan_avg", "truncated_normal")``.

    >>> w = glorot_normal()(random.PRNGKey(0), (400, 300))
    >>> round(float(w.var() * (400 + 300) / 2), 1)
    1.0
    """)
glorot_uniform = _scaling(1.0, "fan_avg", "uniform", """Glorot (Xavier) uniform:
    ``variance_scaling(1.0, "fan_avg", "uniform")``, draws in ``±sqrt(6 / (fan_in +
    fan_out))``.

    >>> w = glorot_uniform()(random.PRNGKey(0), (40, 30))
    >>> bool(abs(w).max() <= (6 / (40 + 30)) ** 0.5)
    True
    """)
he_normal = _scaling(2.0, "fan_in", "truncated_normal", """He (Kaiming) normal:
    ``variance_scaling(2.0, "fan_in", "truncated_normal")``.

    >>> w = he_normal()(random.PRNGKey(0), (400, 300))
    >>> round(float(w.var() * 400), 1)
    2.0
    """)
he_uniform = _scaling(2.0, "fan_in", "uniform", """He (Kaiming) uniform:
    ``variance_scaling(2.0, "fan_in", "uniform")``.

    >>> w = he_uniform()(random.PRNGKey(0), (40, 30))
    >>> bool(abs(w).max() <= (6 / 40) ** 0.5)
    True
    """)
lecun_normal = _scaling(1.0, "fan_in", "truncated_normal", """LeCun normal:
    ``variance_scaling(1.0, "fan_in", "truncated_normal")``.

    >>> w = lecun_normal()(random.PRNGKey(0), (400, 300))
    >>> round(float(w.var() * 400), 1)
    1.0
    """)
lecun_uniform = _scaling(1.0, "fan_in", "uniform", """LeCun uniform:
    ``variance_scaling(1.0, "fan_in", "uniform")``.

    >>> w = lecun_uniform()(random.PRNGKey(0), (40, 30))
    >>> bool(abs(w).max() <= (3 / 40) ** 0.5)
    True
    """)
for _name in ("glorot_normal", "glorot_uniform", "he_normal", "he_uniform", "lecun_normal",
              "lecun_uniform"):
    globals()[_name].__name__ = globals()[_name].__qualname__ = _name
del _name
xavier_normal, xavier_uniform = glorot_normal, glorot_uniform
kaiming_normal, kaiming_uniform = he_normal, he_uniform


def orthogonal(scale=1.0, column_axis: int = -1, dtype=None) -> Initializer:
    """An initializer of ``scale`` times an orthogonal matrix: the shape is read as a matrix
    whose columns run along ``column_axis`` (all other axes flattened into rows); its
    columns are orthonormal if there are fewer of them than rows, its rows otherwise.

    >>> w = orthogonal()(random.PRNGKey(0), (4, 3))
    >>> bool(np.allclose(w.T @ w, np.eye(3)))
    True
    """
    def init(key, shape, dtype=dtype):
        dtype, shape = _dtype("orthogonal", dtype), _shape(shape)
        if len(shape) < 2:
            raise ValueError(f"initializers.orthogonal: the shape must have at least 2 "
                             f"dimensions, got {shape}")
        if 0 in shape:
            return fnp.zeros(shape, dtype)
        n_cols = shape[column_axis]
        q = random.orthogonal(key, math.prod(shape) // n_cols, (), dtype, n_cols)
        rest = shape[:column_axis % len(shape)] + shape[column_axis % len(shape) + 1:]
        q = fnp.moveaxis(fnp.reshape(q, rest + (n_cols,)), -1, column_axis)
        return np.asarray(scale, dtype) * q
    return init


def delta_orthogonal(scale=1.0, column_axis: int = -1, dtype=None) -> Initializer:
    """An initializer for 1-, 2- or 3-D convolution kernels (shape ``(*window, in, out)``,
    ``in <= out``): zero except at the window's centre, which holds an orthogonal
    ``(in, out)`` matrix (the delta-orthogonal scheme).

    >>> w = delta_orthogonal()(random.PRNGKey(0), (3, 2, 2))
    >>> bool(np.allclose(w[1] @ w[1].T, np.eye(2))), float(abs(w[0]).max())
    (True, 0.0)
    """
    def init(key, shape, dtype=dtype):
        dtype, shape = _dtype("delta_orthogonal", dtype), _shape(shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError(f"initializers.delta_orthogonal: the shape must have 3, 4 or "
                             f"5 dimensions (window, in, out), got {shape}")
        if shape[-1] < shape[-2]:
            raise ValueError(f"initializers.delta_orthogonal: the input size {shape[-2]} "
                             f"must not exceed the output size {shape[-1]}")
        centre = orthogonal(scale, column_axis, dtype)(key, shape[-2:])
        window = shape[:-2]
        widths = [((k - 1) // 2, k - 1 - (k - 1) // 2) for k in window] + [(0, 0), (0, 0)]
        return fnp.pad(fnp.reshape(centre, (1,) * len(window) + shape[-2:]), widths)
    return init


def __dir__() -> list[str]:
    return sorted(__all__)
