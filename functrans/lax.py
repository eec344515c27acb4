"""``functrans.lax``: the primitives' own functions, with JAX's ``jax.lax`` names.

Unlike ``functrans.numpy`` these do no implicit dtype promotion beyond NumPy's rules for
the operation itself, and shape operations take explicit static parameters.
"""
import builtins
import sys

import numpy as np

from functrans import lax_extra, lax_linalg as linalg
from functrans.lax_extra import *  # noqa: F401,F403
# Each family's __all__ is what it adds to functrans.lax (docs/design.md, "Add a primitive").
from functrans.primitives.collectives import *  # noqa: F401,F403
from functrans.primitives.control_flow import *  # noqa: F401,F403
from functrans.primitives.conversion import *  # noqa: F401,F403
from functrans.primitives.convolution import *  # noqa: F401,F403
from functrans.primitives.cumulative import *  # noqa: F401,F403
from functrans.primitives.elementwise import *  # noqa: F401,F403
from functrans.primitives.fft import *  # noqa: F401,F403
from functrans.primitives.gather import *  # noqa: F401,F403
from functrans.primitives.indexing import *  # noqa: F401,F403
from functrans.primitives.linalg import *  # noqa: F401,F403
from functrans.primitives.linear_solve import *  # noqa: F401,F403
from functrans.primitives.reductions import *  # noqa: F401,F403
from functrans.primitives.shape import *  # noqa: F401,F403
from functrans.primitives.slicing import *  # noqa: F401,F403
from functrans.primitives.sorting import *  # noqa: F401,F403
from functrans.primitives.special import *  # noqa: F401,F403
from functrans.primitives.windows import *  # noqa: F401,F403
from functrans.primitives import collectives, control_flow, conversion, convolution, cumulative
from functrans.primitives import elementwise, indexing, reductions, slicing, sorting, special
from functrans.primitives import linear_solve, windows
from functrans.primitives import fft as fft_family, gather as gather_family
from functrans.primitives import linalg as linalg_family, shape as shape_family
from functrans.primitives.shape import normalize_axis as _normalize_axis
from functrans.primitives.shape import shape_of as _shape_of
from functrans.primitives.shape import transpose_axes as _transpose_axes

#: this module's own functions, then every family's
_OWN = ["dynamic_index_in_dim", "dynamic_slice_in_dim", "dynamic_update_index_in_dim",
        "dynamic_update_slice_in_dim", "index_in_dim", "index_take", "linalg", "slice_in_dim",
        "transpose"]
_FAMILIES = (collectives, control_flow, conversion, convolution, cumulative, elementwise,
             fft_family, gather_family, indexing, linalg_family, reductions, shape_family,
             slicing, sorting, special, linear_solve, windows)
__all__ = _OWN + [name for family in _FAMILIES + (lax_extra,) for name in family.__all__]
del collectives, control_flow, conversion, convolution, cumulative, elementwise, fft_family
del gather_family
del indexing, linalg_family, reductions, shape_family, slicing, sorting, special
del linear_solve, windows, lax_extra

# ``import functrans.lax.linalg`` works as ``import jax.lax.linalg`` does, though this module
# is not a package: the import system finds the submodule here.
sys.modules[__name__ + ".linalg"] = linalg


def transpose(operand, permutation):
    """Permute the axes of ``operand``: output axis ``i`` is input axis ``permutation[i]``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.transpose(np.zeros((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    return _transpose_axes(operand, permutation)


def _axis(operand, axis: int, name: str) -> int:
    from_shape = _shape_of(operand)
    return _normalize_axis(axis, len(from_shape), f"{name}: axis")


def slice_in_dim(operand, start_index, limit_index, stride: int = 1, axis: int = 0):
    """``lax.slice`` along one ``axis``: ``start_index:limit_index:stride`` there (None for
    an end, negative ones counted from the end), whole slices elsewhere.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.slice_in_dim(np.arange(12).reshape(3, 4), 1, -1, axis=1)
    array([[ 1,  2],
           [ 5,  6],
           [ 9, 10]])
    """
    shape = _shape_of(operand)
    axis = _axis(operand, axis, "slice_in_dim")
    start, limit, _ = builtins.slice(start_index, limit_index).indices(shape[axis])
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, builtins.max(start, limit), int(stride)
    return slice(operand, starts, limits, strides)


def index_in_dim(operand, index: int, axis: int = 0, keepdims: bool = True):
    """The static position ``index`` (negative: from the end) along ``axis``, keeping that
    axis with length 1 unless ``keepdims`` is False.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.index_in_dim(np.arange(6).reshape(2, 3), -1, axis=1, keepdims=False)
    array([2, 5])
    """
    axis = _axis(operand, axis, "index_in_dim")
    n = _shape_of(operand)[axis]
    i = int(index)
    if not -n <= i < n:
        raise IndexError(f"index_in_dim: index {i} is out of bounds for axis {axis} with "
                         f"size {n}")
    out = slice_in_dim(operand, i % n, i % n + 1, axis=axis)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_slice_in_dim(operand, start_index, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True):
    """``dynamic_slice`` along one ``axis``: ``slice_size`` elements from the (possibly
    traced, clamped) ``start_index``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.dynamic_slice_in_dim(np.arange(10), 8, 3)
    array([7, 8, 9])
    """
    shape = _shape_of(operand)
    axis = _axis(operand, axis, "dynamic_slice_in_dim")
    starts = [0] * len(shape)
    starts[axis] = start_index
    sizes = list(shape)
    sizes[axis] = int(slice_size)
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True):
    """The (possibly traced, clamped) position ``index`` along ``axis``, keeping that axis
    with length 1 unless ``keepdims`` is False.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.dynamic_index_in_dim(np.arange(6).reshape(3, 2), -1, keepdims=False)
    array([4, 5])
    """
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    return out if keepdims else squeeze(out, (_axis(operand, axis, "dynamic_index_in_dim"),))


def dynamic_update_slice_in_dim(operand, update, start_index, axis: int, *,
                                allow_negative_indices: bool = True):
    """``dynamic_update_slice`` along one ``axis``: ``update`` written from the (possibly
    traced, clamped) ``start_index`` there.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.dynamic_update_slice_in_dim(np.zeros(5), np.ones(2), -2, axis=0)
    array([0., 0., 0., 1., 1.])
    """
    axis = _axis(operand, axis, "dynamic_update_slice_in_dim")
    starts = [0] * len(_shape_of(operand))
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts,
                                allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand, update, index, axis: int, *,
                                allow_negative_indices: bool = True):
    """``update`` (with or without ``axis``) written at the (possibly traced) position
    ``index`` along ``axis``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.dynamic_update_index_in_dim(np.zeros((3, 2)), np.ones(2), 1, axis=0)
    array([[0., 0.],
           [1., 1.],
           [0., 0.]])
    """
    axis = _axis(operand, axis, "dynamic_update_index_in_dim")
    if len(_shape_of(update)) == len(_shape_of(operand)) - 1:
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


def index_take(src, idxs, axes):
    """``src`` read at the positions ``idxs[j]`` (broadcast together; clamped) along
    ``axes[j]``: the result's leading axes are the indices', then ``src``'s other axes.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.index_take(np.arange(12).reshape(3, 4), (np.array([2, 0]), np.array([1, 3])),
    ...                (0, 1))
    array([9, 3])
    """
    axes = tuple(_axis(src, a, "index_take") for a in axes)
    if len(idxs) != len(axes):
        raise ValueError(f"index_take: {len(idxs)} index arrays for {len(axes)} axes")
    rest = tuple(a for a in range(len(_shape_of(src))) if a not in axes)
    moved = transpose(src, axes + rest)
    batch = np.broadcast_shapes(*(_shape_of(i) for i in idxs))
    positions = concatenate([expand_dims(broadcast_in_dim(convert_element_type(i, np.int64),
                                                          batch, tuple(range(
                                                              len(batch) - len(_shape_of(i)),
                                                              len(batch)))), (len(batch),))
                             for i in idxs], len(batch))
    return gather(moved, positions)


def __dir__() -> list[str]:
    return sorted(__all__)
