"""``functrans.lax``: the primitives' own functions, with JAX's ``jax.lax`` names.

Unlike ``functrans.numpy`` these do no implicit dtype promotion beyond NumPy's rules for
the operation itself, and shape operations take explicit static parameters.
"""
import builtins
import sys

import numpy as np

from functrans import lax_extra, lax_linalg as linalg, lax_ragged
from functrans.core import Primitive as _Primitive
from functrans.lax_extra import *  # noqa: F401,F403
from functrans.lax_ragged import *  # noqa: F401,F403
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
from functrans.primitives.prng import rng_uniform_p as _rng_uniform_p
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
__all__ = _OWN + [name for family in _FAMILIES + (lax_extra, lax_ragged)
                  for name in family.__all__]

#: The primitive objects under the names JAX's lax gives them (``lax.mul_p``), for code that
#: walks jaxprs (``eqn.primitive is lax.mul_p``).  Binding one directly takes functrans's
#: parameters (``make_jaxpr`` shows them), which are not always JAX's.
_PRIMITIVE_NAMES = (
    "abs_p", "acos_p", "acosh_p", "add_p", "all_gather_p", "all_to_all_p", "and_p", "argmax_p",
    "argmin_p", "asin_p", "asinh_p", "atan2_p", "atan_p", "atanh_p", "axis_index_p",
    "bessel_i0e_p", "bessel_i1e_p", "bitcast_convert_type_p", "broadcast_in_dim_p",
    "cbrt_p", "ceil_p", "clz_p", "complex_p", "concatenate_p", "cond_p", "conj_p",
    "conv_general_dilated_p", "convert_element_type_p", "cos_p", "cosh_p", "cummax_p",
    "cummin_p", "cumprod_p", "cumsum_p", "digamma_p", "div_p", "dot_general_p",
    "dynamic_slice_p", "dynamic_update_slice_p", "eq_p", "erf_inv_p", "erf_p", "erfc_p",
    "exp2_p", "exp_p", "expm1_p", "fft_p", "floor_p", "gather_p", "ge_p", "gt_p",
    "igamma_grad_a_p", "igamma_p", "igammac_p", "imag_p", "integer_pow_p", "iota_p",
    "is_finite_p", "le_p", "lgamma_p", "linear_solve_p", "log1p_p", "log_p",
    "logistic_p", "lt_p", "max_p", "min_p", "mul_p", "mulhi_p", "ne_p", "neg_p",
    "nextafter_p", "not_p", "optimization_barrier_p", "or_p", "pad_p", "pmax_p",
    "pmin_p", "polygamma_p", "population_count_p", "pow_p", "ppermute_p", "psum_p", "real_p",
    "reduce_and_p", "reduce_max_p", "reduce_min_p", "reduce_or_p", "reduce_precision_p",
    "reduce_prod_p", "reduce_sum_p", "reduce_window_max_p", "reduce_window_min_p",
    "reduce_window_p", "reduce_window_sum_p", "reduce_xor_p",
    "regularized_incomplete_beta_p", "rem_p", "reshape_p", "rev_p", "rng_uniform_p",
    "round_p", "scan_p", "scatter_add_p", "scatter_max_p", "scatter_min_p", "scatter_mul_p",
    "scatter_p",
    "select_and_gather_add_p", "select_and_scatter_add_p", "shift_left_p",
    "shift_right_arithmetic_p", "shift_right_logical_p", "sign_p", "sin_p", "sinh_p",
    "slice_p", "sort_p", "sqrt_p", "squeeze_p", "stop_gradient_p", "sub_p", "tan_p",
    "tanh_p", "transpose_p", "while_p", "xor_p", "zeta_p",
)
for _family in _FAMILIES:
    globals().update((n, getattr(_family, n)) for n in _PRIMITIVE_NAMES if hasattr(_family, n))
rng_uniform_p = _rng_uniform_p  # lax_extra's rng_uniform binds it
assert all(isinstance(globals().get(n), _Primitive) for n in _PRIMITIVE_NAMES), "a name moved"
__all__ += list(_PRIMITIVE_NAMES)
del _family
del collectives, control_flow, conversion, convolution, cumulative, elementwise, fft_family
del gather_family
del indexing, linalg_family, reductions, shape_family, slicing, sorting, special
del linear_solve, windows, lax_extra, lax_ragged

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
