"""``functrans.image``: image resampling, as ``jax.image`` (``resize``,
``scale_and_translate``, ``ResizeMethod``).

Every method but nearest is separable: along each resized axis the output is the input
contracted with a weight matrix ``(input size, output size)`` whose columns are the
interpolation kernel, centred on each output pixel's position in the input, normalised to
sum to one.  With ``antialias`` the kernel is widened by the downsampling factor, so that
a shrunk image averages over the pixels it replaces.  The weights are built from
``functrans.numpy`` functions, so resizing is differentiable in the image and (for
``scale_and_translate``) in the scale and translation, and works under ``vmap``, ``jit``
and on CuPy arrays.

>>> import numpy as np, functrans.image as image
>>> image.resize(np.array([0.0, 1.0]), (4,), "linear")
array([0.  , 0.25, 0.75, 1.  ])
"""
from __future__ import annotations

import enum
import operator
from typing import Callable, Sequence

import numpy as np

import functrans.numpy as fnp
from functrans import lax
from functrans.core import get_aval

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """The resampling methods of ``resize`` and ``scale_and_translate``, as
    ``jax.image.ResizeMethod``: ``NEAREST`` (nearest pixel), ``LINEAR`` (triangle kernel),
    ``LANCZOS3`` and ``LANCZOS5`` (Lanczos kernels of radius 3 and 5), ``CUBIC`` (Keys'
    cubic kernel, ``a = -0.5``), ``CUBIC_PYTORCH`` (the cubic kernel with ``a = -0.75`` and
    repeated edges, as PyTorch's bicubic, when not antialiasing) and ``AREA`` (the overlap
    of output and input pixels, as TensorFlow's area resize).

    >>> import functrans.image as image
    >>> image.ResizeMethod.from_string("bilinear")
    <ResizeMethod.LINEAR: 1>
    """
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> "ResizeMethod":
        """The method named ``s`` (JAX's names, e.g. ``"bicubic"`` for ``CUBIC``).

        >>> import functrans.image as image
        >>> image.ResizeMethod.from_string("lanczos3")
        <ResizeMethod.LANCZOS3: 2>
        """
        try:
            return _NAMES[s]
        except KeyError:
            raise ValueError(f"Unknown resize method {s!r}; use one of "
                             f"{sorted(_NAMES)}") from None


_NAMES = {
    "nearest": ResizeMethod.NEAREST,
    "linear": ResizeMethod.LINEAR, "bilinear": ResizeMethod.LINEAR,
    "trilinear": ResizeMethod.LINEAR, "triangle": ResizeMethod.LINEAR,
    "lanczos3": ResizeMethod.LANCZOS3, "lanczos5": ResizeMethod.LANCZOS5,
    "cubic": ResizeMethod.CUBIC, "bicubic": ResizeMethod.CUBIC,
    "tricubic": ResizeMethod.CUBIC,
    "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH, "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
    "area": ResizeMethod.AREA,
}


# -- kernels: functions of the distance |x| >= 0 in input pixels ---------------------------

def _triangle(x):
    return fnp.maximum(0.0, 1.0 - x)


def _lanczos(radius: float) -> Callable:
    def kernel(x):
        y = radius * fnp.sin(np.pi * x) * fnp.sin(np.pi * x / radius)
        # near zero the ratio is 0/0; its limit is 1
        ratio = y / fnp.where(x > 1e-3, np.pi ** 2 * x * x, 1.0)
        return fnp.where(x > radius, 0.0, fnp.where(x > 1e-3, ratio, 1.0))
    return kernel


def _cubic(a: float) -> Callable:
    """The cubic convolution kernel with parameter ``a`` (Keys: -0.5; OpenCV and PyTorch:
    -0.75)."""
    def kernel(x):
        inner = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
        outer = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
        return fnp.where(x >= 2.0, 0.0, fnp.where(x >= 1.0, outer, inner))
    return kernel


_AREA = object()

# method -> (radius, kernel)
_KERNELS = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _cubic(-0.5)),
    ResizeMethod.CUBIC_PYTORCH: (2, _cubic(-0.75)),
    ResizeMethod.AREA: (1, _AREA),
}


def _normalise_columns(weights):
    """Columns divided by their sums; columns summing to (nearly) zero become zero."""
    total = fnp.sum(weights, axis=0, keepdims=True)
    usable = fnp.abs(total) > 1000.0 * float(np.finfo(np.float32).eps)
    return fnp.where(usable, weights / fnp.where(total != 0, total, 1.0), 0.0)


def _weight_matrix(input_size: int, output_size: int, scale, translation, kernel,
                   antialias: bool, edge_padding: bool, radius: int, like, dtype):
    """The ``(input_size, output_size)`` matrix that resamples one axis: output pixel ``j``
    (centre ``j + 0.5``) reads the input around ``(j + 0.5 - translation) / scale``."""
    inverse = 1.0 / scale
    output_index = lax.iota(dtype, output_size, like=like)
    if kernel is _AREA:
        left = (output_index - translation) * inverse
        right = left + inverse
        input_left = lax.iota(dtype, input_size, like=like)
        overlap = (fnp.minimum(right[None, :], input_left[:, None] + 1.0)
                   - fnp.maximum(left[None, :], input_left[:, None]))
        return _mask_outside(_normalise_columns(fnp.maximum(overlap, 0.0)), output_index,
                             inverse, translation, input_size)
    kernel_scale = fnp.maximum(inverse, 1.0) if antialias else 1.0
    sample = (output_index + 0.5) * inverse - translation * inverse - 0.5
    pad = radius if edge_padding else 0  # edge padding comes without antialiasing only
    expanded = lax.iota(dtype, input_size + 2 * pad, like=like) - pad
    weights = kernel(fnp.abs(sample[None, :] - expanded[:, None]) / kernel_scale)
    if not edge_padding:
        return _mask_outside(_normalise_columns(weights), output_index, inverse, translation,
                             input_size)
    # positions beyond the edges read the edge pixels: fold their rows onto the edge rows
    first = fnp.sum(weights[:pad + 1], axis=0, keepdims=True)
    last = fnp.sum(weights[pad + input_size - 1:], axis=0, keepdims=True)
    inner = weights[pad + 1:pad + input_size - 1]
    folded = fnp.concatenate([first, inner, last], axis=0) if input_size > 1 else \
        fnp.sum(weights, axis=0, keepdims=True)
    return _normalise_columns(folded)


def _mask_outside(weights, output_index, inverse, translation, input_size: int):
    """Zero columns whose sample position lies outside the input (output pixels off the
    image are zero, as in JAX)."""
    sample = (output_index + 0.5) * inverse - translation * inverse - 0.5
    inside = (sample >= -0.5) & (sample <= input_size - 0.5)
    return fnp.where(inside[None, :], weights, 0.0)


def _contract(x, weights, axis: int):
    """``x`` with its ``axis`` replaced by ``weights``' output axis."""
    out = fnp.tensordot(x, weights, axes=([axis], [0]))
    return fnp.moveaxis(out, -1, axis)


def _method(method, name: str) -> ResizeMethod:
    if isinstance(method, str):
        return ResizeMethod.from_string(method)
    if not isinstance(method, ResizeMethod):
        raise TypeError(f"{name}: method must be a string or a ResizeMethod, got {method!r}")
    return method


def _check_shape(shape, image, name: str) -> tuple:
    shape = tuple(operator.index(s) for s in shape)
    if len(shape) != get_aval(image).ndim:
        raise ValueError(f"{name}: shape must have one entry per dimension of image; got "
                         f"shape {shape} for an image of shape {get_aval(image).shape}")
    if any(s < 0 for s in shape):
        raise ValueError(f"{name}: shape must be non-negative, got {shape}")
    return shape


def _inexact(x):
    x = fnp.asarray(x)
    return x if get_aval(x).dtype.kind in "fc" else fnp.asarray(x, np.float64)


def scale_and_translate(image, shape: Sequence[int], spatial_dims: Sequence[int], scale,
                        translation, method, antialias: bool = True, precision=None):
    """``image`` resampled to ``shape`` under the map ``x -> x * scale + translation`` of
    each axis in ``spatial_dims`` (pixel ``i`` has its centre at ``i + 0.5``; output pixels
    whose centre maps to outside the input are zero), as
    ``jax.image.scale_and_translate``.  ``scale`` and ``translation`` hold one entry per
    spatial dimension and may be traced (the result is differentiable in them).  ``method`` is any ``ResizeMethod`` but nearest.  ``precision`` is accepted for
    JAX compatibility (the contraction is exact in the input's dtype).

    >>> import numpy as np, functrans.image as image
    >>> image.scale_and_translate(np.array([0.0, 1.0, 2.0, 3.0]), (4,), (0,),
    ...                           np.array([1.0]), np.array([1.0]), "linear")
    array([0., 0., 1., 2.])
    """
    del precision
    image = _inexact(image)
    shape = _check_shape(shape, image, "scale_and_translate")
    method = _method(method, "scale_and_translate")
    if method == ResizeMethod.NEAREST:
        raise ValueError("scale_and_translate: nearest-neighbour resampling is not "
                         "supported; use resize(..., 'nearest') or another method")
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    spatial_dims = [operator.index(d) for d in spatial_dims]
    scale = fnp.asarray(scale)
    translation = fnp.asarray(translation)
    dtype = np.result_type(get_aval(scale).dtype, get_aval(translation).dtype)
    dtype = dtype if dtype.kind == "f" else np.dtype(np.float64)
    scale, translation = fnp.asarray(scale, dtype), fnp.asarray(translation, dtype)
    for name, value in (("scale", scale), ("translation", translation)):
        if get_aval(value).shape != (len(spatial_dims),):
            raise ValueError(f"scale_and_translate: {name} must have one entry per spatial "
                             f"dimension ({len(spatial_dims)}), got shape "
                             f"{get_aval(value).shape}")
    ndim = get_aval(image).ndim
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    for i, d in enumerate(spatial_dims):
        if not -ndim <= d < ndim:
            raise ValueError(f"scale_and_translate: spatial dimension {d} is out of bounds "
                             f"for an image of shape {get_aval(image).shape}")
        d %= ndim
        weights = _weight_matrix(get_aval(image).shape[d], shape[d], scale[i], translation[i],
                                 kernel, antialias, edge_padding, radius, image, dtype)
        image = _contract(image, fnp.asarray(weights, get_aval(image).dtype), d)
    return image


def _resize_nearest(image, shape: tuple):
    for d, (m, n) in enumerate(zip(get_aval(image).shape, shape)):
        if m == n:
            continue
        # the nearest input pixel to each output centre, computed in float32 as JAX does
        centres = (lax.iota(np.float32, n, like=image) + np.float32(0.5)) * np.float32(m / n)
        index = lax.convert_element_type(fnp.floor(centres), np.int64)
        image = fnp.take(image, index, axis=d)
    return image


def resize(image, shape: Sequence[int], method, antialias: bool = True, precision=None):
    """``image`` resampled to ``shape`` (every dimension; keep a batch or channel
    dimension's size to leave it alone), as ``jax.image.resize``.

    ``method`` is a ``ResizeMethod`` or its name: ``"nearest"`` (keeps the dtype),
    ``"linear"``/``"bilinear"``/``"trilinear"``, ``"cubic"``/``"bicubic"``/
    ``"tricubic"``, ``"lanczos3"``, ``"lanczos5"``, ``"cubic-pytorch"`` or ``"area"``; the
    others give a floating-point result.  With ``antialias`` (the default) downsampling
    widens the kernel by the shrink factor, so every input pixel contributes; it changes
    nothing when upsampling.  Pixel centres are at ``i + 0.5``, as in JAX and TensorFlow
    (``align_corners=False``).  ``precision`` is accepted for JAX compatibility.

    >>> import numpy as np, functrans as ft, functrans.image as image
    >>> image.resize(np.array([[1.0, 2.0], [3.0, 4.0]]), (1, 1), "linear")  # the mean
    array([[2.5]])
    >>> image.resize(np.array([1, 2, 3]), (6,), "nearest")
    array([1, 1, 2, 2, 3, 3])
    >>> ft.grad(lambda x: image.resize(x, (4,), "linear").sum())(np.ones(2))
    array([2., 2.])
    """
    del precision
    image = fnp.asarray(image)
    shape = _check_shape(shape, image, "resize")
    method = _method(method, "resize")
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    image = _inexact(image)
    in_shape = get_aval(image).shape
    spatial = [d for d in range(len(shape)) if in_shape[d] != shape[d]]
    if not spatial:
        return image
    scale = [shape[d] / in_shape[d] if shape[d] != 0 and in_shape[d] != 0 else 1.0
             for d in spatial]
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    dtype = np.dtype(np.float64)
    for d, s in zip(spatial, scale):
        weights = _weight_matrix(in_shape[d], shape[d], s, 0.0, kernel, antialias,
                                 edge_padding, radius, image, dtype)
        image = _contract(image, fnp.asarray(weights, get_aval(image).dtype), d)
    return image
